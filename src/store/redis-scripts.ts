import {
  FLEET_ANSWER_BUCKET_MS,
  FLEET_ANSWER_BUCKETS,
  FLEET_ARRIVALS_MS,
  FLEET_DELIVERY_GAIN,
  FLEET_DELIVERY_MIN_SPAN_MS,
  FLEET_FRESH_BUCKETS,
  FLEET_GROWTH_DOUBLING_MS,
  FLEET_IDLE_GAPS,
  FLEET_MAX_HINT_MS,
  FLEET_MAX_RATE,
  FLEET_RESPACE_DRIFT,
  FLEET_SPELL_END_MS,
  FLEET_SPELL_MIN_MS,
  FLEET_UNPACED_HOLD_GAPS,
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
-- Anything read back from a key may have been written by an older build, an operator or a
-- hostile peer: a field that does not parse to a finite number reads as its default (one bad
-- field must not raise in every process sharing the key).
local function fin(x, d)
  x = tonumber(x)
  if x == nil or x ~= x or x == math.huge or x == -math.huge then return d end
  return x
end
-- A key of another type would raise WRONGTYPE in every operation on it: it is reset instead,
-- and reads as fresh state.
local function hashOnly(key)
  local t = redis.call('TYPE', key)
  if type(t) == 'table' then t = t.ok end
  if t ~= 'hash' and t ~= 'none' then redis.call('DEL', key) end
end
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
hashOnly(KEYS[1])
local fields = redis.call('HGETALL', KEYS[1])
local R, T, others = 0, 0, 0
local ownerField = 'o:' .. owner
for i = 1, #fields, 2 do
  local f = fields[i]
  local kind = string.sub(f, 1, 1)
  if kind == 'o' then
    local seen = fin(fields[i + 1], nil)
    if seen == nil or seen < now - bucketMs * windowBuckets then
      redis.call('HDEL', KEYS[1], f)
    elseif f ~= ownerField then
      others = others + 1
    end
  else
    -- A bucket more than one ahead of now was dated by a wrong clock or written by hand: it
    -- would never leave the window. Counts that are negative or not finite are no counts.
    local b = fin(string.sub(f, 3), nil)
    local v = fin(fields[i + 1], -1)
    if b == nil or b < oldest or b > bucket + 1 or v < 0 or (kind ~= 'q' and kind ~= 't') then
      redis.call('HDEL', KEYS[1], f)
    elseif kind == 'q' then
      R = R + v
    else
      T = T + v
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
  local had = fin(redis.call('HGET', KEYS[1], 't:' .. returnBucket), 0)
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
hashOnly(KEYS[1])
local h = redis.call('HMGET', KEYS[1], 'state', 'generation', 'openUntil', 'opensInRow', 'probeOwner', 'probeUntil')
local state = fin(h[1], 0)
if state ~= 0 and state ~= 1 and state ~= 2 then state = 0 end
local generation = fin(h[2], 0)
local openUntil = fin(h[3], 0)
local opensInRow = fin(h[4], 0)
if opensInRow < 0 then opensInRow = 0 end
local probeOwner = h[5] or ''
local probeUntil = fin(h[6], 0)
-- No break lasts longer than this process's own maximum from now, nor a probe lease longer
-- than its own: an end written far out (by hand, or by a peer configured otherwise) would
-- otherwise hold every process's breaker open for good, the key's TTL refreshed each sync.
if openUntil > now + maxBreakMs then openUntil = now + maxBreakMs end
if probeUntil > now + probeLeaseMs then probeUntil = now + probeLeaseMs end
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
  hashOnly(answersKey)
  local all = redis.call('HGETALL', answersKey)
  for i = 1, #all, 2 do
    local b = fin(string.sub(all[i], 2), nil)
    local v = fin(all[i + 1], -1)
    local kind = string.sub(all[i], 1, 1)
    -- As in the budget: buckets ahead of now, and counts that are not counts, are dropped.
    if b == nil or b < oldest or b > bucket + 1 or v < 0 or (kind ~= 's' and kind ~= 'r') then
      redis.call('HDEL', answersKey, all[i])
    elseif kind == 's' then
      servedSum = servedSum + v
    else
      local r = v
      rejectedSum = rejectedSum + r
      if r > 0 and b >= bucket - ${FLEET_FRESH_BUCKETS} + 1 then fresh = true end
    end
  end
  local from = fin(redis.call('HGET', paceKey, 'answersFrom'), 0)
  local quiet = servedSum == 0 and rejectedSum == 0
  if served > 0 or rejected > 0 then
    if quiet then
      from = now
      redis.call('HSET', paceKey, 'answersFrom', num(from))
    end
    redis.call('HINCRBY', answersKey, 's' .. num(bucket), served)
    redis.call('HINCRBY', answersKey, 'r' .. num(bucket), rejected)
    redis.call('PEXPIRE', answersKey, ttl)
    servedSum = servedSum + served
    rejectedSum = rejectedSum + rejected
  end
  if servedSum + rejectedSum == 0 then return nil, false, false, false end
  local span = now - math.max(oldest * ${FLEET_ANSWER_BUCKET_MS}, from)
  if span < ${FLEET_DELIVERY_MIN_SPAN_MS} then return nil, rejectedSum > 0, fresh, quiet end
  return servedSum / span, rejectedSum > 0, fresh, quiet
end
`;

/**
 * Counts a report's paced answers into the fleet's spell of rejections (fields spellFrom,
 * spellServed and spellServedSince of the pace hash) and returns what the fleet
 * got through over it, or nil (see `spellRate` in fleet-ledger.ts).
 */
const SPELL_RATE = `
local function spellRate(paceKey, served, rejected, quiet, gap)
  local f = redis.call('HMGET', paceKey, 'spellFrom', 'spellServed', 'spellServedSince')
  local from = fin(f[1], -1)
  local was = from
  -- A count written by anyone else may be negative: it would read as a negative rate.
  local spellServed = math.max(fin(f[2], 0), 0)
  local servedSince = fin(f[3], -1)
  if from >= 0 and servedSince >= 0 then
    local idle = quiet and served + rejected > 0 and gap > 0 and gap * ${FLEET_IDLE_GAPS} <= ${FLEET_ANSWER_BUCKETS * FLEET_ANSWER_BUCKET_MS}
    if idle or now - servedSince >= ${FLEET_SPELL_END_MS} then from = -1 end
  end
  if from < 0 then
    if not (rejected > 0) then
      if was >= 0 then redis.call('HSET', paceKey, 'spellFrom', '-1') end
      return nil
    end
    from = now
    spellServed = 0
  end
  spellServed = spellServed + served
  if rejected > 0 then
    servedSince = -1
  elseif served > 0 and servedSince < 0 then
    servedSince = now
  end
  redis.call('HSET', paceKey, 'spellFrom', num(from), 'spellServed', num(spellServed), 'spellServedSince', num(servedSince))
  local span = now - from
  if span < ${FLEET_SPELL_MIN_MS} then return nil end
  return spellServed / span
end
`;

/**
 * Whether first tries left unpaced were reported within FLEET_ARRIVALS_MS (field unpacedAt of
 * the pace hash; see `arriving` in fleet-ledger.ts).
 */
const ARRIVING = `
local function arriving(paceKey)
  local at = fin(redis.call('HGET', paceKey, 'unpacedAt'), -1)
  return at >= 0 and at <= now and now - at <= ${FLEET_ARRIVALS_MS}
end
`;

/**
 * Combines live contributions in KEYS[2] (owner → "rate:until:kind"), refreshing ARGV
 * owner's, with the cap on guesses kept in the pace hash KEYS[1] and the fleet's delivery
 * rate from the answers hash KEYS[3]: returns the fleet's rate and its estimate (see
 * `contribute` in fleet-ledger.ts).
 */
const CONTRIBUTE = `${FLEET_DELIVERY}${SPELL_RATE}${ARRIVING}
-- A contribution that does not parse, or claims a rate or a life no process gives, reads as
-- expired (and is dropped): one such entry would otherwise set the fleet's rate for good.
local function parseContribution(v)
  local sep = string.find(v, ':', 1, true)
  if sep == nil then return 0, 0, 0 end
  local sep2 = string.find(v, ':', sep + 1, true)
  local r = fin(string.sub(v, 1, sep - 1), -1)
  local untilMs = fin(string.sub(v, sep + 1, (sep2 or 0) - 1), 0)
  local k = sep2 and fin(string.sub(v, sep2 + 1), -1) or 0
  if r < 0 or r > ${FLEET_MAX_RATE} or untilMs > now + ${FLEET_MAX_HINT_MS} or (k ~= 0 and k ~= 1 and k ~= 2) then
    return 0, 0, 0
  end
  return r, untilMs, k
end
local function contribute(paceKey, key, answersKey, owner, rate, kind, contributionMs, ttl, served, rejected, unpaced)
  hashOnly(paceKey)
  hashOnly(key)
  if unpaced > 0 then redis.call('HSET', paceKey, 'unpacedAt', num(now)) end
  local c = redis.call('HMGET', paceKey, 'guessCap', 'guessCapUntil', 'gap', 'ticket', 'baseTicket', 'baseAt', 'growFrom')
  local guessCap = fin(c[1], 0)
  local guessCapUntil = fin(c[2], 0)
  local gap = fin(c[3], 0)
  local lastTicket = fin(c[4], 1) - 1
  local baseTicket = fin(c[5], 1)
  local baseAt = fin(c[6], 0)
  local growFrom = fin(c[7], 0)
  if guessCapUntil > now + ${FLEET_MAX_HINT_MS} then guessCapUntil = 0 end
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
    -- A life beyond the longest hint would read as a hostile entry and be dropped (quietMs is the caller's).
    redis.call('HSET', key, owner, num(rate) .. ':' .. num(now + math.min(contributionMs, ${FLEET_MAX_HINT_MS})) .. ':' .. kind)
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
  local delivered, wasRejected, fresh, quiet = fleetDelivery(paceKey, answersKey, served, rejected, ttl)
  local spell = spellRate(paceKey, served, rejected, quiet, gap)
  if spell and estimate > spell then estimate = spell end
  if fresh and gap > 0 and estimate > 1 / gap then estimate = 1 / gap end
  local grow = 0
  if delivered then
    local cap = ${FLEET_DELIVERY_GAIN} * delivered
    if wasRejected then
      if estimate > cap or arriving(paceKey) then estimate = cap end
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

/**
 * Re-spaces the queue in hash `h` (see `respace` in fleet-ledger.ts); returns the epoch. Then
 * `unpacedSent`: first tries push the waiting tickets (see `unpacedSent` in fleet-ledger.ts).
 * Both need `arriving` (CONTRIBUTE) first.
 */
const RESPACE = `
local function firstWaiting(ticket, baseTicket, baseAt, gap)
  local first = baseTicket
  if now >= baseAt then
    if gap > 0 then first = first + math.floor((now - baseAt) / gap) + 1 else first = ticket end
  end
  if first > ticket then first = ticket end
  return first
end
local function respace(key, rate, hintUntil)
  local h = redis.call('HMGET', key, 'ticket', 'baseTicket', 'baseAt', 'gap')
  local ticket = fin(h[1], 1)
  local baseTicket = fin(h[2], 1)
  local baseAt = fin(h[3], 0)
  local oldGap = fin(h[4], 0)
  local gap = 1 / rate
  -- No epoch starts later than the longest hint from now (plus one gap): one written further
  -- out is re-spaced now rather than kept.
  if baseAt > now + ${FLEET_MAX_HINT_MS} + gap then oldGap = 0 end
  local first = firstWaiting(ticket, baseTicket, baseAt, oldGap)
  local drift = oldGap / gap - 1
  local steady = drift <= ${FLEET_RESPACE_DRIFT} and drift >= -${FLEET_RESPACE_DRIFT}
  if first < ticket and steady and baseAt >= hintUntil then return ticket, baseTicket, baseAt, oldGap end
  local lastDue = now - gap
  if first > baseTicket then lastDue = baseAt + (first - 1 - baseTicket) * oldGap end
  local held = now
  if oldGap > 0 and arriving(key) then
    held = math.min(baseAt + (first - baseTicket) * oldGap, now + ${FLEET_UNPACED_HOLD_GAPS} * gap)
  end
  baseAt = math.max(now, hintUntil, lastDue + gap, held)
  redis.call('HSET', key, 'baseTicket', first, 'baseAt', num(baseAt), 'gap', num(gap))
  return ticket, first, baseAt, gap
end
local function unpacedSent(key, n, estimate, ticket, baseTicket, baseAt, gap, hintUntil)
  if not (n > 0) or not (gap > 0) or not (estimate > 0) or hintUntil > now then return baseTicket, baseAt end
  local first = firstWaiting(ticket, baseTicket, baseAt, gap)
  local head = baseAt + (first - baseTicket) * gap
  local nextAt = math.min(math.max(head, now) + n * gap, now + ${FLEET_UNPACED_HOLD_GAPS} * gap)
  if not (nextAt > head) then return baseTicket, baseAt end
  redis.call('HSET', key, 'baseTicket', first, 'baseAt', num(nextAt))
  return first, nextAt
end
`;

/**
 * KEYS[1] pace hash (ticket, epoch, activeUntil, hintUntil), KEYS[2] contributions hash,
 * KEYS[3] answers hash.
 */
export const BOOK_SLOT_SCRIPT = `${PRELUDE}${CONTRIBUTE}${RESPACE}
local owner = ARGV[1]
local unpaced = tonumber(ARGV[10])
local rate, estimate = contribute(KEYS[1], KEYS[2], KEYS[3], owner, tonumber(ARGV[2]), tonumber(ARGV[6]),
  tonumber(ARGV[3]), tonumber(ARGV[5]), tonumber(ARGV[7]), tonumber(ARGV[8]), unpaced)
local minRate = tonumber(ARGV[4])
-- Not while the fleet only searches (see queueRate in fleet-ledger.ts).
if rate < minRate and not (estimate == 0 and rate > 0) then rate = minRate end
local hintUntil = fin(redis.call('HGET', KEYS[1], 'hintUntil'), 0)
if hintUntil > now + ${FLEET_MAX_HINT_MS} then hintUntil = now + ${FLEET_MAX_HINT_MS} end
local ticket, baseTicket, baseAt, gap = respace(KEYS[1], rate, hintUntil)
baseTicket, baseAt = unpacedSent(KEYS[1], unpaced, estimate, ticket, baseTicket, baseAt, gap, hintUntil)
-- ARGV[9]: the latest store ms the caller can use a slot at (−1: no limit); a later slot is
-- not booked (ticket 0), so that a caller who cannot use it does not move the queue's end.
local latest = tonumber(ARGV[9])
if latest >= 0 and ticket >= baseTicket and baseAt + (ticket - baseTicket) * gap > latest then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]))
  return { num(now), '0', num(baseTicket), num(baseAt), num(gap), num(estimate) }
end
redis.call('HSET', KEYS[1], 'ticket', ticket + 1)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]))
return { num(now), num(ticket), num(baseTicket), num(baseAt), num(gap), num(estimate) }
`;

/** KEYS[1] pace hash, KEYS[2] contributions hash, KEYS[3] answers hash. */
export const PACE_SYNC_SCRIPT = `${PRELUDE}${CONTRIBUTE}${RESPACE}
local owner = ARGV[1]
local ttl = tonumber(ARGV[7])
local unpaced = tonumber(ARGV[12])
local rate, estimate = contribute(KEYS[1], KEYS[2], KEYS[3], owner, tonumber(ARGV[2]), tonumber(ARGV[8]),
  tonumber(ARGV[3]), ttl, tonumber(ARGV[10]), tonumber(ARGV[11]), unpaced)
local minRate = tonumber(ARGV[9])
if rate < minRate and not (estimate == 0 and rate > 0) then rate = minRate end
local active = ARGV[4] == '1'
local quietMs = tonumber(ARGV[5])
local hintMs = tonumber(ARGV[6])
local h = redis.call('HMGET', KEYS[1], 'activeUntil', 'hintUntil', 'ticket', 'baseTicket', 'baseAt', 'gap')
local activeUntil = fin(h[1], 0)
local hintUntil = fin(h[2], 0)
local ticket = fin(h[3], 1)
local baseTicket = fin(h[4], 1)
local baseAt = fin(h[5], 0)
local gap = fin(h[6], 0)
if active and now + quietMs > activeUntil then activeUntil = now + quietMs end
if hintMs > 0 and now + hintMs > hintUntil then hintUntil = now + hintMs end
-- Shared ends are only ever raised: one written far out (by hand, or a hint no caller would
-- wait for) would hold the fleet's queue for good. None lasts beyond the longest hint a
-- caller accepts (the retry policy's default maxRetryAfterMs) from now.
if activeUntil > now + ${FLEET_MAX_HINT_MS} then activeUntil = now + ${FLEET_MAX_HINT_MS} end
if hintUntil > now + ${FLEET_MAX_HINT_MS} then hintUntil = now + ${FLEET_MAX_HINT_MS} end
redis.call('HSET', KEYS[1], 'activeUntil', num(activeUntil), 'hintUntil', num(hintUntil))
if ticket - 1 >= baseTicket and baseAt + (ticket - 1 - baseTicket) * gap > now then
  ticket, baseTicket, baseAt, gap = respace(KEYS[1], rate, hintUntil)
end
baseTicket, baseAt = unpacedSent(KEYS[1], unpaced, estimate, ticket, baseTicket, baseAt, gap, hintUntil)
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
