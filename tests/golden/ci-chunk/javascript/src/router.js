/**
 * router.js: maps request paths such as /users/:id to handlers.
 */
import { escapeRegExp, noop } from "./util.js";
import EventEmitter from "node:events";

const path = require("path");

const METHODS = ["GET", "POST", "PUT", "DELETE"];

/** Compile "/users/:id" into a RegExp and the list of parameter names. */
const compile = (pattern) => {
  const names = [];
  const source = pattern
    .split("/")
    .map((part) => {
      if (part.startsWith(":")) {
        names.push(part.slice(1));
        return "([^/]+)";
      }
      return escapeRegExp(part);
    })
    .join("/");
  return { re: new RegExp(`^${source}$`), names };
};

export class Router extends EventEmitter {
  #routes = [];

  constructor(prefix = "") {
    super();
    this.prefix = prefix;
  }

  /**
   * Register a handler.  Returns this, so that calls chain.
   */
  add(method, pattern, handler = noop) {
    if (!METHODS.includes(method)) {
      throw new TypeError(`unknown method ${method}`);
    }
    this.#routes.push({ method, ...compile(this.prefix + pattern), handler });
    return this;
  }

  match(method, url) {
    for (const route of this.#routes) {
      const m = route.method === method && route.re.exec(url);
      if (m) {
        const params = Object.fromEntries(route.names.map((n, i) => [n, m[i + 1]]));
        return { handler: route.handler, params };
      }
    }
    return null;
  }

  get size() {
    return this.#routes.length;
  }

  static fromTable(table) {
    const r = new Router();
    for (const [key, handler] of Object.entries(table)) {
      const [method, pattern] = key.split(" ");
      r.add(method, pattern, handler);
    }
    return r;
  }
}

function* walk(dir, depth = 0) {
  yield dir;
  if (depth < 3) {
    yield* walk(path.join(dir, "sub"), depth + 1);
  }
}

export default async function serve(router, req) {
  const found = router.match(req.method, req.url);
  if (!found) {
    return { status: 404 };
  }
  router.emit("hit", req.url);
  return found.handler(req, found.params);
}

module.exports.handlers = {
  health(req) {
    return { status: 200, body: "ok" };
  },
};
