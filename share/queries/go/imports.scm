; ci imports query for Go.  @import is the import spec (one per package, inside a
; grouped `import ( ... )` too), @target its path, an interpreted "..." or raw `...`
; string (ci strips the quotes).
;   import "fmt"; import u "example.com/m/pkg/util" -> "fmt", "example.com/m/pkg/util"
(import_spec
  path: [(interpreted_string_literal) (raw_string_literal)] @target) @import
