; ci imports query for Python.  @import is the statement, @target the module:
;   import a.b, c as d      -> "a.b", "c" (one match per module)
;   from a.b import c       -> "a.b"
;   from .mod import x      -> ".mod"; from . import x -> "."; from ..p.m -> "..p.m"
;   __import__("m"), importlib.import_module("m") -> "m" (literal arguments only)
; `from __future__ import ...` is a future_import_statement: not an import.
(import_statement
  name: (dotted_name) @target) @import

(import_statement
  name: (aliased_import
    name: (dotted_name) @target)) @import

(import_from_statement
  module_name: [(dotted_name) (relative_import)] @target) @import

((call
   function: (identifier) @_fn
   arguments: (argument_list . (string (string_content) @target) .)) @import
 (#eq? @_fn "__import__"))

((call
   function: (attribute
     object: (identifier) @_mod
     attribute: (identifier) @_fn)
   arguments: (argument_list . (string (string_content) @target) .)) @import
 (#eq? @_mod "importlib")
 (#eq? @_fn "import_module"))

; `from m import a, b as c`: one more match per name (@member), so that a name
; that is a module of m ("from . import sessions") imports that module.
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @target
  name: [(dotted_name) @member
         (aliased_import name: (dotted_name) @member)]) @import
