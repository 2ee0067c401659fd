; ci's additions to tree-sitter-c-sharp's tags.scm: structs, records (record
; structs too) and their positional properties, enums and their members,
; constructors, fields, properties, events, local functions, namespaces with
; qualified names and file-scoped namespaces; calls of plain and generic names
; (nameof aside), `new` of generic and qualified types.
(struct_declaration name: (identifier) @name) @definition.struct
(record_declaration name: (identifier) @name) @definition.record
(record_declaration
  (parameter_list (parameter name: (identifier) @name) @definition.property))
(enum_declaration name: (identifier) @name) @definition.enum
(enum_member_declaration name: (identifier) @name) @definition.constant
(constructor_declaration name: (identifier) @name) @definition.constructor
(field_declaration
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field
(property_declaration name: (identifier) @name) @definition.property
(event_declaration name: (identifier) @name) @definition.event
(event_field_declaration
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.event
(local_function_statement name: (identifier) @name) @definition.function
(namespace_declaration name: (qualified_name) @name) @definition.module
(file_scoped_namespace_declaration name: [(identifier) (qualified_name)] @name) @definition.module

((invocation_expression function: (identifier) @name) @reference.call
  (#not-eq? @name "nameof"))
(invocation_expression function: (generic_name (identifier) @name)) @reference.call
(invocation_expression
  function: (member_access_expression name: (generic_name (identifier) @name))) @reference.send
(object_creation_expression type: (generic_name (identifier) @name)) @reference.class
(object_creation_expression type: (qualified_name name: (identifier) @name)) @reference.class
