import { describe, expect, it } from 'vitest';
import { KeyedCache } from '../../src/policies/keyed-cache.js';

describe('KeyedCache', () => {
  it('evicts the least recently used key; a use refreshes a key', () => {
    const cache = new KeyedCache({ maxKeys: 2, create: (key) => ({ key }) });
    cache.get('a');
    cache.get('b');
    cache.get('a');
    cache.get('c');
    expect([...cache.keys()]).toEqual(['a', 'c']);
    expect(cache.evicted).toBe(1);
  });

  it('never evicts a kept value; steps over at most MAX_SKIPS of them per insertion (O(1)), growing past maxKeys rather than dropping one', () => {
    let asked = 0;
    const busy = new Set<string>();
    const cache = new KeyedCache<{ key: string }>({
      maxKeys: 1_000,
      create: (key) => ({ key }),
      keep: (v) => {
        asked++;
        return busy.has(v.key);
      },
    });
    for (let i = 0; i < 1_000; i++) {
      cache.get(`busy-${i}`);
      busy.add(`busy-${i}`);
    }
    for (let i = 0; i < 100; i++) {
      asked = 0;
      cache.get(`new-${i}`);
      expect(asked).toBeLessThanOrEqual(2 * (KeyedCache.MAX_SKIPS + 1));
    }
    for (let i = 0; i < 1_000; i++) expect(cache.has(`busy-${i}`)).toBe(true);
    expect(cache.size).toBeGreaterThan(1_000);
    // Once droppable, kept values go again and the cache returns under its limit.
    busy.clear();
    for (let i = 0; i < 2_000; i++) cache.get(`later-${i}`);
    expect(cache.size).toBe(1_000);
  });
});
