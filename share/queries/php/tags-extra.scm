; ci's additions to tree-sitter-php's tags.scm: enums and their cases,
; constants; calls of plain function names and null-safe method calls, `new` of
; a plain class name.
(enum_declaration name: (name) @name) @definition.enum
(enum_case name: (name) @name) @definition.constant
(const_declaration (const_element (name) @name)) @definition.constant

(function_call_expression function: (name) @name) @reference.call
(nullsafe_member_call_expression name: (name) @name) @reference.call
((object_creation_expression (name) @name) @reference.class
  (#not-any-of? @name "static" "self" "parent"))
