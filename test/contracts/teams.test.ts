// A team grant's drift (resignOf): who joined and who left between the members an owner's device
// signed and the team as it is now, whatever the order or repetitions of either list.
import { describe, expect, it } from 'vitest';
import { GrantSchema, resignOf } from '../../src/contracts/index.ts';

const people = (...ids: string[]) => ids.map((userId) => ({ userId, name: userId.toUpperCase() }));
const nameOf = (id: string) => (id === 'gone' ? null : `${id}!`);

describe("a team grant's drift from its team", () => {
  it("is null when the signed members are the team's, in any order, named any number of times", () => {
    expect(resignOf(['a', 'b'], people('b', 'a'), nameOf)).toBeNull();
    expect(resignOf(['a', 'b', 'a'], people('a', 'b'), nameOf)).toBeNull();
    expect(resignOf([], [], nameOf)).toBeNull();
  });

  it("names who joined with the team's entry for them, and who left with the name the relay still has (null for none)", () => {
    expect(resignOf(['a', 'b', 'gone'], people('b', 'c', 'd'), nameOf)).toEqual({
      joined: [
        { userId: 'c', name: 'C' },
        { userId: 'd', name: 'D' },
      ],
      left: [
        { userId: 'a', name: 'a!' },
        { userId: 'gone', name: null },
      ],
    });
    expect(resignOf(['a'], people('a', 'b'), nameOf)).toEqual({ joined: [{ userId: 'b', name: 'B' }], left: [] });
    expect(resignOf(['a', 'b'], people('a'), nameOf)).toEqual({ joined: [], left: [{ userId: 'b', name: 'b!' }] });
  });

  it('is part of every grant the API answers: a grant without it does not parse', () => {
    const grant = {
      id: 'g_1',
      hostId: 'h',
      chatId: null,
      subject: { type: 'team', id: 't', name: 'crew' },
      role: 'operator',
      createdBy: 'a',
      createdAt: 1,
      signed: true,
    };
    expect(GrantSchema.safeParse(grant).success).toBe(false);
    expect(GrantSchema.parse({ ...grant, resign: null }).resign).toBeNull();
    expect(GrantSchema.safeParse({ ...grant, resign: { joined: [{ userId: '' }], left: [] } }).success).toBe(false);
  });
});
