; ci imports query for Ruby.  @import is the call, @target its literal string
; argument (ci strips the quotes); interpolated strings are not imports.
;   require "json"; require_relative "helper"; load "x.rb"  -> "json", "helper", "x.rb"
;   autoload :Foo, "foo/bar"                                -> "foo/bar"
((call
   !receiver
   method: (identifier) @_fn
   arguments: (argument_list . (string) @target)) @import
 (#any-of? @_fn "require" "require_relative" "load")
 (#not-match? @target "#\\{"))

((call
   !receiver
   method: (identifier) @_fn
   arguments: (argument_list . (simple_symbol) . (string) @target)) @import
 (#eq? @_fn "autoload")
 (#not-match? @target "#\\{"))
