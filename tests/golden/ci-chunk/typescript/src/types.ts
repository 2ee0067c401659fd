// types.ts: the shapes shared by the cache and its callers.

export type Key = string | number;

export interface Clock {
  now(): number;
}
