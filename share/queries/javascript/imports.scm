; ci imports query for JavaScript.  @import is the statement or call, @target the
; module specifier: a string or a template string without substitutions (ci strips
; the quotes or backticks).
;   import x from "m"; import "m"          -> "m"
;   export { a } from "m"; export * from "m" -> "m"
;   require("m"), import("m")               -> "m" (literal arguments only)
(import_statement
  source: (string) @target) @import

(export_statement
  source: (string) @target) @import

((call_expression
   function: (identifier) @_fn
   arguments: (arguments . [(string) (template_string)] @target .)) @import
 (#eq? @_fn "require")
 (#not-match? @target "\\$\\{"))

((call_expression
   function: (import)
   arguments: (arguments . [(string) (template_string)] @target)) @import
 (#not-match? @target "\\$\\{"))
