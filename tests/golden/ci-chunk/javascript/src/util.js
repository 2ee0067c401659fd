// util.js: small helpers shared by the router and the server.

export function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export const noop = () => {};
