; ci imports query for Bash.  @import is the command, @target its first argument,
; a word or a quoted string (ci strips the quotes); a path that expands a
; variable or a command is not an import.
;   source lib/x.sh;  . "./y.sh"  -> "lib/x.sh", "./y.sh"
((command
   name: (command_name) @_cmd
   .
   argument: [(word) (string) (raw_string)] @target) @import
 (#any-of? @_cmd "source" ".")
 (#not-match? @target "[$`]"))
