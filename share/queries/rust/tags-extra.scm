; ci's additions to tree-sitter-rust's tags.scm: trait method signatures,
; functions declared in extern blocks, constants and statics; calls of paths
; (`Type::f()`) and of generic functions (`f::<T>()`).
(trait_item
  body: (declaration_list
    (function_signature_item name: (identifier) @name) @definition.method))
(foreign_mod_item
  body: (declaration_list
    (function_signature_item name: (identifier) @name) @definition.function))
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant

(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(call_expression
  function: (generic_function
    function: [
      (identifier) @name
      (scoped_identifier name: (identifier) @name)
      (field_expression field: (field_identifier) @name)
    ])) @reference.call
