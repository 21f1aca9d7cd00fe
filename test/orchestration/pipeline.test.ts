import { describe, expect, it } from 'vitest';
import { Pipeline } from '../../src/orchestration/pipeline.js';
import { ADMIT, type Stage } from '../../src/orchestration/stage.js';

/** A gate whose `observesSuccess` is a getter: asked after every success. */
class Switching implements Stage {
  readonly name = 'switching';
  observing = false;
  asked = 0;
  get observesSuccess(): boolean {
    this.asked++;
    return this.observing;
  }
  enter(): typeof ADMIT {
    return ADMIT;
  }
}

const gate = (name: string, observesSuccess: boolean): Stage => ({ name, observesSuccess, enter: () => ADMIT });

describe('Pipeline.successNeedsClock', () => {
  it('asks a getter every time and follows its answer; a gate declaring `false` as a field never needs the clock', () => {
    const switching = new Switching();
    const pipeline = new Pipeline([gate('never', false), switching, gate('also-never', false)]);
    expect(pipeline.successNeedsClock).toBe(false);
    switching.observing = true;
    expect(pipeline.successNeedsClock).toBe(true);
    switching.observing = false;
    expect(pipeline.successNeedsClock).toBe(false);
    expect(switching.asked).toBe(3);
  });

  it('a gate declaring `true` as a field always needs the clock', () => {
    expect(new Pipeline([gate('never', false), gate('always', true)]).successNeedsClock).toBe(true);
    expect(new Pipeline([gate('never', false)]).successNeedsClock).toBe(false);
    expect(Pipeline.EMPTY.successNeedsClock).toBe(false);
  });
});
