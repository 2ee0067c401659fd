; ci's additions to tree-sitter-c's tags.scm, which has definitions only:
; macros, enumerators, file-scope variables, and references (calls, types,
; macro uses are indistinguishable from calls and are tagged as calls).
; Alternations rather than one pattern each: compiling the query is most of
; the cost of a first C file, and each pattern rooted at translation_unit
; adds a millisecond to it.
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
(enumerator name: (identifier) @name) @definition.constant
(translation_unit
  (declaration
    declarator: [(init_declarator declarator: (identifier) @name) (identifier) @name]) @definition.variable)

(call_expression
  function: [(identifier) @name (field_expression field: (field_identifier) @name)]) @reference.call
(type_identifier) @name @reference.type
