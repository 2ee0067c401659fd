; ci imports query for PHP.  @import is the include or use, @target:
;   require "a.php"; include_once('b.php')  -> the string (ci strips the quotes);
;     a string that interpolates a variable is not an import
;   require __DIR__ . '/c.php'               -> "/c.php" (resolved from the file's dir)
;   use A\B\C;  use A\B as D, E\F;          -> "A\B\C", "A\B", "E\F"
;   use function A\f;                        -> "A\f"
;   use A\B\{C, D as E};                     -> "A\B" (the group's prefix)
; A trait's `use T;` inside a class is a use_declaration: not an import.

([(require_expression [(string) (encapsed_string)] @target)
   (require_once_expression [(string) (encapsed_string)] @target)
   (include_expression [(string) (encapsed_string)] @target)
   (include_once_expression [(string) (encapsed_string)] @target)] @import
 (#not-match? @target "\\$"))

([(require_expression
     (parenthesized_expression [(string) (encapsed_string)] @target))
   (require_once_expression
     (parenthesized_expression [(string) (encapsed_string)] @target))
   (include_expression
     (parenthesized_expression [(string) (encapsed_string)] @target))
   (include_once_expression
     (parenthesized_expression [(string) (encapsed_string)] @target))] @import
 (#not-match? @target "\\$"))

([(require_expression
     (binary_expression
       left: (name) @_dir
       right: [(string) (encapsed_string)] @target))
   (require_once_expression
     (binary_expression
       left: (name) @_dir
       right: [(string) (encapsed_string)] @target))
   (include_expression
     (binary_expression
       left: (name) @_dir
       right: [(string) (encapsed_string)] @target))
   (include_once_expression
     (binary_expression
       left: (name) @_dir
       right: [(string) (encapsed_string)] @target))] @import
 (#eq? @_dir "__DIR__")
 (#not-match? @target "\\$"))

(namespace_use_declaration
  (namespace_use_clause
    . [(qualified_name) (name)] @target)) @import

(namespace_use_declaration
  (namespace_name) @target
  body: (namespace_use_group)) @import
