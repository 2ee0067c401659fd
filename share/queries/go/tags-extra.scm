; ci's additions to tree-sitter-go's tags.scm: type aliases, package-level
; variables and constants, interface methods and struct fields.
(type_alias name: (type_identifier) @name) @definition.type
(source_file
  (var_declaration (var_spec name: (identifier) @name) @definition.variable)
  (#not-eq? @name "_"))
(source_file
  (var_declaration (var_spec_list (var_spec name: (identifier) @name) @definition.variable))
  (#not-eq? @name "_"))
; const_spec's name field covers the commas of "const a, b = ..." too, and then
; matches only the first name: match the identifiers, its only direct ones.
(source_file
  (const_declaration (const_spec (identifier) @name) @definition.constant)
  (#not-eq? @name "_"))
(method_elem name: (field_identifier) @name) @definition.method
(field_declaration name: (field_identifier) @name) @definition.field
