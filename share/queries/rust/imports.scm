; ci imports query for Rust.  @import is the item, @target the module path:
;   use std::io;  use crate::a::b::c;  use super::x::Y as Z  -> the path
;   use a::b::{c, d};  use a::b::*                          -> "a::b"
;   mod foo;  (a declaration without a body: the module is in another file) -> "foo"
;   extern crate alloc;                                     -> "alloc"
(use_declaration
  argument: [(scoped_identifier) (identifier) (crate) (self) (super)] @target) @import

(use_declaration
  argument: (use_as_clause
    path: (_) @target)) @import

(use_declaration
  argument: (scoped_use_list
    path: (_) @target)) @import

(use_declaration
  argument: (use_wildcard
    . (_) @target)) @import

(mod_item
  name: (identifier) @target
  !body) @import

(extern_crate_declaration
  name: (identifier) @target) @import
