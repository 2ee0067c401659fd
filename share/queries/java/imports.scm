; ci imports query for Java.  @import is the declaration, @target the imported name
; without `static`, and without the `.*` of an on-demand import:
;   import a.b.C;  import static a.b.C.m;  import a.b.*;  -> "a.b.C", "a.b.C.m", "a.b"
(import_declaration
  [(scoped_identifier) (identifier)] @target) @import
