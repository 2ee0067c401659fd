; ci's additions to tree-sitter-python's tags.scm (which has module-level
; assignments as constants): class attributes, ALL_CAPS ones as constants.
(class_definition
  body: (block
    (expression_statement
      (assignment left: (identifier) @name) @definition.constant))
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
(class_definition
  body: (block
    (expression_statement
      (assignment left: (identifier) @name) @definition.field))
  (#not-match? @name "^[A-Z][A-Z0-9_]*$"))
