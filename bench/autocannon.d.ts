// autocannon ships no types; this declares the part of its API the bench uses (autocannon 9).
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  export type RawRequest = { method?: string; path?: string; headers?: Record<string, string>; body?: string };

  export type RequestSpec = RawRequest & {
    setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest;
  };

  export type Options = {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    maxOverallRequests?: number;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    requests?: RequestSpec[];
    workers?: number;
  };

  export type Histogram = {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p99: number;
  };

  export type Result = {
    latency: Histogram;
    requests: Histogram;
    /** Seconds, rounded to 10 ms. */
    duration: number;
    totalRequests: number;
    totalCompletedRequests: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  };

  export type Instance = EventEmitter & PromiseLike<Result> & { stop(): void };

  function autocannon(options: Options): Instance;
  export default autocannon;
}
