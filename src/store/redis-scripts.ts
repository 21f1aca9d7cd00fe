import {
  FLEET_ANSWER_BUCKET_MS,
  FLEET_ANSWER_BUCKETS,
  FLEET_DELIVERY_GAIN,
  FLEET_DELIVERY_MIN_SPAN_MS,
  FLEET_FRESH_BUCKETS,
  FLEET_GROWTH_DOUBLING_MS,
  FLEET_RESPACE_DRIFT,
  REFUTED_GUESS,
} from './fleet-ledger.js';

/**
 * The fleet's operations as Redis Lua scripts: each is one atomic step, timed by the
 * server's `TIME`, and a line-by-line copy of its twin in `fleet-ledger.ts` (a test runs
 * both on the same random sequences). Numbers cross the wire as strings in `%.17g`, because
 * Redis truncates a Lua number it returns to an integer.
 *
 * Every key a script touches is passed in KEYS and shares the downstream's hash tag, so the
 * scripts run unchanged on Redis Cluster; every write refreshes the key's TTL.
 */

const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local function num(x) return string.format('%.17g', x) end
`;

/** KEYS[1] budget hash (fields q:<bucket>, t:<bucket>, o:<owner> → last sync). */
export const BUDGET_SCRIPT = `${PRELUDE}
local bucketMs = tonumber(ARGV[1])
local windowBuckets = tonumber(ARGV[2])
local ratio = tonumber(ARGV[3])
local reserve = tonumber(ARGV[4])
local requests = tonumber(ARGV[5])
local returned = tonumber(ARGV[6])
local returnBucket = tonumber(ARGV[7])
local spent = tonumber(ARGV[8])
local want = tonumber(ARGV[9])
local ttl = tonumber(ARGV[10])
local owner = ARGV[11]
local bucket = math.floor(now / bucketMs)
local oldest = bucket - windowBuckets + 1
local fields = redis.call('HGETALL', KEYS[1])
local R, T, others = 0, 0, 0
local ownerField = 'o:' .. owner
for i = 1, #fields, 2 do
  local f = fields[i]
  local kind = string.sub(f, 1, 1)
  if kind == 'o' then
    if tonumber(fields[i + 1]) < now - bucketMs * windowBuckets then
      redis.call('HDEL', KEYS[1], f)
    elseif f ~= ownerField then
      others = others + 1
    end
  else
    local b = tonumber(string.sub(f, 3))
    if b < oldest then
      redis.call('HDEL', KEYS[1], f)
    elseif kind == 'q' then
      R = R + tonumber(fields[i + 1])
    else
      T = T + tonumber(fields[i + 1])
    end
  end
end
redis.call('HSET', KEYS[1], ownerField, num(now))
if requests > 0 then
  redis.call('HINCRBYFLOAT', KEYS[1], 'q:' .. bucket, requests)
  R = R + requests
end
if spent > 0 then
  redis.call('HINCRBYFLOAT', KEYS[1], 't:' .. bucket, spent)
  T = T + spent
end
if returned > 0 and returnBucket >= oldest and returnBucket <= bucket then
  local had = tonumber(redis.call('HGET', KEYS[1], 't:' .. returnBucket) or '0')
  local back = math.min(returned, had)
  if back > 0 then
    redis.call('HINCRBYFLOAT', KEYS[1], 't:' .. returnBucket, -back)
    T = T - back
  end
end
local left = math.floor(math.max(ratio * R, reserve) - T + 1e-9)
local available = 0
if left > 0 then available = left end
local granted = math.min(want, available)
if granted > 0 then
  redis.call('HINCRBYFLOAT', KEYS[1], 't:' .. bucket, granted)
end
redis.call('PEXPIRE', KEYS[1], ttl)
return { num(now), num(bucket), num(granted), num(available - granted), num(R), num(T + granted), num(others + 1) }
`;

/**
 * KEYS[1] breaker hash. ARGV[12] (optional): a channel to PUBLISH ARGV[13] on when a report
 * opens the breaker — the other processes' news (`RedisStore.onBreakerNews`).
 */
export const BREAKER_SCRIPT = `${PRELUDE}
local owner = ARGV[1]
local gen = tonumber(ARGV[2])
local report = ARGV[3]
local breakMs = tonumber(ARGV[4])
local growth = tonumber(ARGV[5])
local maxBreakMs = tonumber(ARGV[6])
local jitter = tonumber(ARGV[7])
local u = tonumber(ARGV[8])
local wantProbe = ARGV[9] == '1'
local probeLeaseMs = tonumber(ARGV[10])
local ttl = tonumber(ARGV[11])
local newsChannel = ARGV[12] or ''
local h = redis.call('HMGET', KEYS[1], 'state', 'generation', 'openUntil', 'opensInRow', 'probeOwner', 'probeUntil')
local state = tonumber(h[1] or '0')
local generation = tonumber(h[2] or '0')
local openUntil = tonumber(h[3] or '0')
local opensInRow = tonumber(h[4] or '0')
local probeOwner = h[5] or ''
local probeUntil = tonumber(h[6] or '0')
local current = gen == generation or (gen == -1 and state == 0)
if report == 'open' and current then
  local holder = state == 2 and probeOwner == owner
  if state == 0 or holder then
    opensInRow = opensInRow + 1
    local ceiling = breakMs * growth ^ (opensInRow - 1)
    if not (ceiling < maxBreakMs) then ceiling = maxBreakMs end
    local d = math.min(maxBreakMs, ceiling * (1 + jitter * (2 * u - 1)))
    state = 1
    openUntil = now + d
    generation = generation + 1
    probeOwner = ''
    probeUntil = 0
    if newsChannel ~= '' then redis.call('PUBLISH', newsChannel, ARGV[13]) end
  end
elseif report == 'close' and current and state == 2 and probeOwner == owner then
  state = 0
  generation = generation + 1
  opensInRow = 0
  probeOwner = ''
  probeUntil = 0
end
if state == 1 and now >= openUntil then
  state = 2
  generation = generation + 1
end
if state == 2 and wantProbe and (probeOwner == '' or now >= probeUntil) then
  if probeOwner ~= '' then generation = generation + 1 end
  probeOwner = owner
  probeUntil = now + probeLeaseMs
end
redis.call('HSET', KEYS[1], 'state', state, 'generation', generation, 'openUntil', num(openUntil),
  'opensInRow', opensInRow, 'probeOwner', probeOwner, 'probeUntil', num(probeUntil))
redis.call('PEXPIRE', KEYS[1], ttl)
return { num(now), num(state), num(generation), num(openUntil), num(opensInRow), probeOwner, num(probeUntil) }
`;

/**
 * Counts a report's paced answers into the answers hash (fields s<bucket>, r<bucket>) and
 * returns the fleet's delivery rate and whether the window holds a rejection, or nil (see
 * `fleetDelivery`).
 */
const FLEET_DELIVERY = `
local function fleetDelivery(paceKey, answersKey, served, rejected, ttl)
  local bucket = math.floor(now / ${FLEET_ANSWER_BUCKET_MS})
  local oldest = bucket - ${FLEET_ANSWER_BUCKETS} + 1
  local servedSum, rejectedSum = 0, 0
  local fresh = rejected > 0
  local all = redis.call('HGETALL', answersKey)
  for i = 1, #all, 2 do
    local b = tonumber(string.sub(all[i], 2))
    if b < oldest then
      redis.call('HDEL', answersKey, all[i])
    elseif string.sub(all[i], 1, 1) == 's' then
      servedSum = servedSum + tonumber(all[i + 1])
    else
      local r = tonumber(all[i + 1])
      rejectedSum = rejectedSum + r
      if r > 0 and b >= bucket - ${FLEET_FRESH_BUCKETS} + 1 then fresh = true end
    end
  end
  local from = tonumber(redis.call('HGET', paceKey, 'answersFrom') or '0')
  if served > 0 or rejected > 0 then
    if servedSum == 0 and rejectedSum == 0 then
      from = now
      redis.call('HSET', paceKey, 'answersFrom', num(from))
    end
    redis.call('HINCRBY', answersKey, 's' .. num(bucket), served)
    redis.call('HINCRBY', answersKey, 'r' .. num(bucket), rejected)
    redis.call('PEXPIRE', answersKey, ttl)
    servedSum = servedSum + served
    rejectedSum = rejectedSum + rejected
  end
  if servedSum + rejectedSum == 0 then return nil, false, false end
  local span = now - math.max(oldest * ${FLEET_ANSWER_BUCKET_MS}, from)
  if span < ${FLEET_DELIVERY_MIN_SPAN_MS} then return nil, rejectedSum > 0, fresh end
  return servedSum / span, rejectedSum > 0, fresh
end
`;

/**
 * Combines live contributions in KEYS[2] (owner → "rate:until:kind"), refreshing ARGV
 * owner's, with the cap on guesses kept in the pace hash KEYS[1] and the fleet's delivery
 * rate from the answers hash KEYS[3]: returns the fleet's rate and its estimate (see
 * `contribute` in fleet-ledger.ts).
 */
const CONTRIBUTE = `${FLEET_DELIVERY}
local function parseContribution(v)
  local sep = string.find(v, ':', 1, true)
  local sep2 = string.find(v, ':', sep + 1, true)
  local r = tonumber(string.sub(v, 1, sep - 1))
  local untilMs = tonumber(string.sub(v, sep + 1, (sep2 or 0) - 1))
  local k = sep2 and tonumber(string.sub(v, sep2 + 1)) or 0
  return r, untilMs, k
end
local function contribute(paceKey, key, answersKey, owner, rate, kind, contributionMs, ttl, served, rejected)
  local c = redis.call('HMGET', paceKey, 'guessCap', 'guessCapUntil', 'gap', 'ticket', 'baseTicket', 'baseAt', 'growFrom')
  local guessCap = tonumber(c[1] or '0')
  local guessCapUntil = tonumber(c[2] or '0')
  local gap = tonumber(c[3] or '0')
  local lastTicket = tonumber(c[4] or '1') - 1
  local baseTicket = tonumber(c[5] or '1')
  local baseAt = tonumber(c[6] or '0')
  local growFrom = tonumber(c[7] or '0')
  if rate > 0 then
    if kind == 0 then
      local before = redis.call('HGET', key, owner)
      local beforeKind, beforeUntil = 0, 0
      if before then
        local _
        _, beforeUntil, beforeKind = parseContribution(before)
      end
      if before and beforeKind ~= 0 and beforeUntil > now and gap > 0 then
        guessCap = ${REFUTED_GUESS} / gap
        guessCapUntil = now + contributionMs
        redis.call('HSET', paceKey, 'guessCap', num(guessCap), 'guessCapUntil', num(guessCapUntil))
      elseif guessCapUntil > now then
        guessCapUntil = now + contributionMs
        redis.call('HSET', paceKey, 'guessCapUntil', num(guessCapUntil))
      end
    end
    redis.call('HSET', key, owner, num(rate) .. ':' .. num(now + contributionMs) .. ':' .. kind)
  end
  local cap = math.huge
  if guessCapUntil > now then cap = guessCap end
  local all = redis.call('HGETALL', key)
  local shares, sharing, whole, guessing, probe = 0, 0, 0, 0, 0
  for i = 1, #all, 2 do
    local r, untilMs, k = parseContribution(all[i + 1])
    if untilMs <= now then
      redis.call('HDEL', key, all[i])
    elseif k == 0 then
      shares = shares + r
      sharing = sharing + 1
    elseif k == 1 then
      local guess = r
      if cap < guess then guess = cap end
      if guess > whole then whole = guess end
      guessing = guessing + 1
    elseif r > probe then
      probe = r
    end
  end
  if #all > 0 then redis.call('PEXPIRE', key, ttl) end
  local estimate = shares
  if guessing > 0 then
    estimate = whole
    if sharing > 0 then
      local implied = (shares * (sharing + guessing)) / sharing
      if implied < estimate then estimate = implied end
      if shares > estimate then estimate = shares end
    end
  end
  local delivered, wasRejected, fresh = fleetDelivery(paceKey, answersKey, served, rejected, ttl)
  if fresh and gap > 0 and estimate > 1 / gap then estimate = 1 / gap end
  local grow = 0
  if delivered then
    local cap = ${FLEET_DELIVERY_GAIN} * delivered
    if wasRejected then
      if estimate > cap then estimate = cap end
    elseif gap > 0 and lastTicket >= baseTicket and baseAt + (lastTicket - baseTicket) * gap > now then
      grow = growFrom
      if grow == 0 then grow = now end
      local floor = cap * 2 ^ ((now - grow) / ${FLEET_GROWTH_DOUBLING_MS})
      if estimate < floor then estimate = floor end
    end
  end
  if grow ~= growFrom then redis.call('HSET', paceKey, 'growFrom', num(grow)) end
  return math.max(estimate, probe), estimate
end
`;

/** Re-spaces the queue in hash `h` (see `respace` in fleet-ledger.ts); returns the epoch. */
const RESPACE = `
local function respace(key, rate, hintUntil)
  local h = redis.call('HMGET', key, 'ticket', 'baseTicket', 'baseAt', 'gap')
  local ticket = tonumber(h[1] or '1')
  local baseTicket = tonumber(h[2] or '1')
  local baseAt = tonumber(h[3] or '0')
  local oldGap = tonumber(h[4] or '0')
  local gap = 1 / rate
  local first = baseTicket
  if now >= baseAt then
    if oldGap > 0 then first = first + math.floor((now - baseAt) / oldGap) + 1 else first = ticket end
  end
  if first > ticket then first = ticket end
  local drift = oldGap / gap - 1
  local steady = drift <= ${FLEET_RESPACE_DRIFT} and drift >= -${FLEET_RESPACE_DRIFT}
  if first < ticket and steady and baseAt >= hintUntil then return ticket, baseTicket, baseAt, oldGap end
  local lastDue = now - gap
  if first > baseTicket then lastDue = baseAt + (first - 1 - baseTicket) * oldGap end
  baseAt = math.max(now, hintUntil, lastDue + gap)
  redis.call('HSET', key, 'baseTicket', first, 'baseAt', num(baseAt), 'gap', num(gap))
  return ticket, first, baseAt, gap
end
`;

/**
 * KEYS[1] pace hash (ticket, epoch, activeUntil, hintUntil), KEYS[2] contributions hash,
 * KEYS[3] answers hash.
 */
export const BOOK_SLOT_SCRIPT = `${PRELUDE}${CONTRIBUTE}${RESPACE}
local owner = ARGV[1]
local rate, estimate = contribute(KEYS[1], KEYS[2], KEYS[3], owner, tonumber(ARGV[2]), tonumber(ARGV[6]),
  tonumber(ARGV[3]), tonumber(ARGV[5]), tonumber(ARGV[7]), tonumber(ARGV[8]))
local minRate = tonumber(ARGV[4])
if rate < minRate then rate = minRate end
local hintUntil = tonumber(redis.call('HGET', KEYS[1], 'hintUntil') or '0')
local ticket, baseTicket, baseAt, gap = respace(KEYS[1], rate, hintUntil)
redis.call('HSET', KEYS[1], 'ticket', ticket + 1)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]))
return { num(now), num(ticket), num(baseTicket), num(baseAt), num(gap), num(estimate) }
`;

/** KEYS[1] pace hash, KEYS[2] contributions hash, KEYS[3] answers hash. */
export const PACE_SYNC_SCRIPT = `${PRELUDE}${CONTRIBUTE}${RESPACE}
local owner = ARGV[1]
local ttl = tonumber(ARGV[7])
local rate, estimate = contribute(KEYS[1], KEYS[2], KEYS[3], owner, tonumber(ARGV[2]), tonumber(ARGV[8]),
  tonumber(ARGV[3]), ttl, tonumber(ARGV[10]), tonumber(ARGV[11]))
local minRate = tonumber(ARGV[9])
if rate < minRate then rate = minRate end
local active = ARGV[4] == '1'
local quietMs = tonumber(ARGV[5])
local hintMs = tonumber(ARGV[6])
local h = redis.call('HMGET', KEYS[1], 'activeUntil', 'hintUntil', 'ticket', 'baseTicket', 'baseAt', 'gap')
local activeUntil = tonumber(h[1] or '0')
local hintUntil = tonumber(h[2] or '0')
local ticket = tonumber(h[3] or '1')
local baseTicket = tonumber(h[4] or '1')
local baseAt = tonumber(h[5] or '0')
local gap = tonumber(h[6] or '0')
if active and now + quietMs > activeUntil then activeUntil = now + quietMs end
if hintMs > 0 and now + hintMs > hintUntil then hintUntil = now + hintMs end
redis.call('HSET', KEYS[1], 'activeUntil', num(activeUntil), 'hintUntil', num(hintUntil))
if ticket - 1 >= baseTicket and baseAt + (ticket - 1 - baseTicket) * gap > now then
  ticket, baseTicket, baseAt, gap = respace(KEYS[1], rate, hintUntil)
end
redis.call('PEXPIRE', KEYS[1], ttl)
return { num(now), num(activeUntil), num(hintUntil), num(baseTicket), num(baseAt), num(gap), num(estimate) }
`;

/**
 * The scripts a batch can run, by position (the id a batch sends is the index + 1). Each runs
 * in the batch exactly as it would alone: its text becomes the body of a function whose
 * parameters are named KEYS and ARGV, so it reads its own slice of the batch's keys and
 * arguments under the names it was written with.
 */
export const BATCHABLE_SCRIPTS = [BUDGET_SCRIPT, BREAKER_SCRIPT, BOOK_SLOT_SCRIPT, PACE_SYNC_SCRIPT] as const;

/**
 * Several operations of one downstream in one round trip: ARGV[1] is their count, then per
 * operation its script id, its number of keys, its number of arguments and those arguments;
 * KEYS are every operation's keys in order. Replies come back as one array, one entry per
 * operation. The operations run one after the other inside one atomic script — as they would
 * have run back to back — and all keys share the downstream's hash tag (Redis Cluster).
 */
export const BATCH_SCRIPT = `
local scripts = {
${BATCHABLE_SCRIPTS.map((s) => `function(KEYS, ARGV)\n${s}\nend`).join(',\n')}
}
local n = tonumber(ARGV[1])
local k = 1
local a = 2
local out = {}
for i = 1, n do
  local id = tonumber(ARGV[a])
  local nk = tonumber(ARGV[a + 1])
  local na = tonumber(ARGV[a + 2])
  a = a + 3
  local keys = {}
  for j = 1, nk do keys[j] = KEYS[k]; k = k + 1 end
  local args = {}
  for j = 1, na do args[j] = ARGV[a]; a = a + 1 end
  out[i] = scripts[id](keys, args)
end
return out
`;
