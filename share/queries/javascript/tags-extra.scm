; ci's additions to tree-sitter-javascript's tags.scm: class fields.
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name) @definition.field
