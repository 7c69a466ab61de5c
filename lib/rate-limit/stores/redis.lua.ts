/**
 * The limiter decisions of algorithms.ts, in Lua, run atomically inside Redis: one round trip
 * per check, and time read from the Redis server (TIME), so instances whose clocks disagree
 * still agree on every decision. Keep the two in step: redis.test.ts runs the shared decision
 * table (tests/fixtures/decision-cases.ts) through this script, with the clock line swapped for
 * the caller's time.
 *
 * KEYS[1]: the bucket key. ARGV[1]: "tb" (token bucket) or "sw" (sliding window).
 * ARGV[2]: the policy's idle TTL in ms (0 for none): the key is kept at least this long.
 * ARGV[3]: the cost, 1 to spend or -1 to give one back (algorithms.ts `Cost`).
 * Token bucket: ARGV[4] = n, then n pairs of capacity, periodMs.
 * Sliding window: ARGV[4] = limit, ARGV[5] = windowMs.
 * Returns { allowed (0|1), remaining, retryAfterMs, resetAfterMs }.
 */
const SERVER_CLOCK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// Tests of the decision table only: the time comes as the last argument.
const CALLER_CLOCK = `
local now = tonumber(ARGV[#ARGV])`;

const DECIDE_AND_STORE = `
local TOL = 1e-9
local kind = ARGV[1]
local cost = tonumber(ARGV[3])
local raw = redis.call('GET', KEYS[1])
local state = nil
if raw then
  local ok, decoded = pcall(cjson.decode, raw)
  if ok and type(decoded) == 'table' and decoded.k == kind then state = decoded end
end

local function snap(x)
  local w = math.floor(x + 0.5)
  if math.abs(x - w) <= TOL then return w end
  return x
end
local function ms_to_refill(deficit, ms_per_token)
  if deficit <= 0 then return 0 end
  return math.ceil((deficit - TOL / 2) * ms_per_token)
end

local STEP_SLACK = 5000
local allowed, remaining, retry, reset, next_state

if kind == 'tb' then
  local n = tonumber(ARGV[4])
  if state and #state.t ~= n then state = nil end
  -- A step back past the slack resumes from now, with no refill for the step (algorithms.ts).
  local stepped = state and (state.l - now > STEP_SLACK)
  local from = now
  if state and not stepped then from = math.max(state.l, now) end
  local elapsed = 0
  if state and not stepped then elapsed = from - state.l end
  local offset = from - now
  local tokens = {}
  allowed = true
  for i = 1, n do
    local cap = tonumber(ARGV[3 + 2 * i])
    local period = tonumber(ARGV[4 + 2 * i])
    local prev = cap
    if state then prev = tonumber(state.t[i]) end
    tokens[i] = snap(math.min(cap, prev + elapsed * cap / period))
    if tokens[i] < 1 and cost > 0 then allowed = false end
  end
  local min_tokens = math.huge
  retry, reset = 0, 0
  for i = 1, n do
    local cap = tonumber(ARGV[3 + 2 * i])
    local ms_per_token = tonumber(ARGV[4 + 2 * i]) / cap
    if allowed then tokens[i] = snap(math.min(cap, tokens[i] - cost)) end
    if tokens[i] < min_tokens then min_tokens = tokens[i] end
    if not allowed then retry = math.max(retry, ms_to_refill(1 - tokens[i], ms_per_token)) end
    reset = math.max(reset, ms_to_refill(cap - tokens[i], ms_per_token))
  end
  remaining = math.max(0, math.floor(min_tokens))
  if allowed then retry = 0 else retry = offset + retry end
  if reset > 0 then reset = offset + reset end
  next_state = { k = 'tb', t = tokens, l = from }
else
  local limit = tonumber(ARGV[4])
  local window = tonumber(ARGV[5])
  -- A step back of more than a window moves the counts to now's window (algorithms.ts).
  if state and state.s - now > window then state.s = math.floor(now / window) * window end
  local eff = now
  if state then eff = math.max(now, state.s) end
  local offset = eff - now
  local start = math.floor(eff / window) * window
  local finish = start + window
  local prev, cur = 0, 0
  if state and state.s == start then prev = state.p; cur = state.c
  elseif state and state.s == start - window then prev = state.c end
  if cost < 0 then cur = math.max(0, cur - 1) end
  local weighted = prev * (finish - eff) / window + cur
  allowed = cost < 0 or weighted + 1 <= limit + TOL
  if allowed and cost > 0 then cur = cur + 1 end
  retry = 0
  if not allowed then
    local at
    if cur + 1 <= limit then at = finish - (limit - 1 - cur) * window / prev
    else at = finish + window - (limit - 1) * window / cur end
    retry = offset + math.max(1, math.ceil(at - eff))
  end
  local zero_at = eff
  if cur > 0 then zero_at = finish + window elseif prev > 0 then zero_at = finish end
  local after = weighted
  if allowed and cost > 0 then after = weighted + 1 end
  remaining = math.max(0, math.floor(limit - after + TOL))
  reset = 0
  if zero_at ~= eff then reset = offset + math.ceil(zero_at - eff) end
  next_state = { k = 'sw', s = start, c = cur, p = prev }
end

-- Forget the key exactly when its state would be fresh again (forgetting then changes nothing),
-- or after the policy's idle TTL if that is longer; renewed on every access.
if reset > 0 then
  redis.call('SET', KEYS[1], cjson.encode(next_state), 'PX', math.max(reset, tonumber(ARGV[2])))
else
  redis.call('DEL', KEYS[1])
end
local a = 0
if allowed then a = 1 end
return { a, remaining, retry, reset }
`;

export const CONSUME_SCRIPT = SERVER_CLOCK + DECIDE_AND_STORE;
/** The same script deciding at the time passed as its last argument (the decision-table tests). */
export const CONSUME_SCRIPT_AT_CALLER_TIME = CALLER_CLOCK + DECIDE_AND_STORE;
