; ci's additions to tree-sitter-typescript's tags.scm (which has the JavaScript
; tags after its own): type aliases, enums and their members, namespaces, class
; fields.
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(enum_body name: (property_identifier) @name @definition.constant)
(enum_body (enum_assignment name: (property_identifier) @name) @definition.constant)
(internal_module name: [(identifier) (nested_identifier)] @name) @definition.module
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.field
