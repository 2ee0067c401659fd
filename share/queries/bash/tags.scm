; Tags for Bash, written for ci (tree-sitter-bash ships none).
(function_definition
  name: (word) @name) @definition.function

(command
  name: (command_name (word) @name)) @reference.call
