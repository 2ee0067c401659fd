; ci's additions to tree-sitter-ruby's tags.scm: constants assigned, and of the
; references its `#is-not? local` pattern made (ci does no scope analysis, so
; that pattern never matches) those that cannot be local variables: calls of a
; constant with arguments (`Integer(s)`), and other uses of constants (mostly
; classes and modules).
(assignment left: (constant) @name) @definition.constant
(assignment left: (scope_resolution name: (constant) @name)) @definition.constant

(call method: (constant) @name arguments: (argument_list)) @reference.call
(constant) @name @reference.class
