import { describe, expect, test } from 'vitest';
import {
  findApiKey,
  firstMissingLine,
  matcherFor,
  matchOutput,
  walkthroughSteps,
  withoutComment,
} from '../../../scripts/walkthrough/parse.js';

describe('walkthrough steps', () => {
  test('commands, their shown output, continuations, background output and directives', () => {
    const doc = [
      '<!-- walkthrough: restart TRUSTED_PROXIES=127.0.0.1 -->',
      '```sh',
      '# prose before any command',
      'curl -s a &   # a stream',
      "curl -s b -d 'x # y' \\",
      '  -d z   # within 5 s',
      '# {"a":1,',
      '#  "b":2}',
      '#   indented',
      '# & (the stream:)',
      '# data: 1',
      'true',
      '```',
      '<!-- walkthrough: skip it needs Docker -->',
      '```sh',
      'docker run x',
      '```',
    ].join('\n');
    expect(walkthroughSteps('d.md', doc)).toEqual([
      { kind: 'restart', line: 1, env: { TRUSTED_PROXIES: '127.0.0.1' } },
      {
        kind: 'block',
        line: 2,
        commands: [
          {
            line: 4,
            text: 'curl -s a &   # a stream',
            expected: ['data: 1'],
            background: true,
            within: undefined,
          },
          {
            line: 5,
            text: "curl -s b -d 'x # y' \\\n  -d z   # within 5 s",
            expected: ['{"a":1,"b":2}', '  indented'],
            background: false,
            within: 5,
          },
          { line: 12, text: 'true', expected: undefined, background: false, within: undefined },
        ],
      },
      { kind: 'skip', line: 14, reason: 'it needs Docker' },
    ]);
  });

  test('a skip without a reason, and an unknown directive, are refused with their line', () => {
    expect(() => walkthroughSteps('d.md', '<!-- walkthrough: skip -->')).toThrow(
      'd.md:1: "walkthrough: skip" must say why',
    );
    expect(() => walkthroughSteps('d.md', '\n<!-- walkthrough: later -->')).toThrow(
      'd.md:2: unknown walkthrough directive "later"',
    );
  });

  test('a trailing comment is cut outside quotes only', () => {
    expect(withoutComment("curl -d 'a # b' x   # note")).toBe("curl -d 'a # b' x");
    expect(withoutComment('echo a#b')).toBe('echo a#b');
  });
});

describe('the first-start API key', () => {
  test('is found whatever its last character, "-" included (no word boundary before a newline)', () => {
    for (const last of ['-', '_', 'a', '9']) {
      const key = `tg_${'Ab1_-'.repeat(6)}x${last}`;
      expect(findApiKey(`created user "admin"; its API key:\n${key}\n`)).toBe(key);
      expect(findApiKey(`${key}`)).toBe(key);
    }
  });

  test('is not found in a longer token', () => {
    expect(findApiKey(`tg_${'a'.repeat(33)}`)).toBeUndefined();
    expect(findApiKey(`tg_${'a'.repeat(32)}-x`)).toBeUndefined();
  });
});

describe('shown output against the real one', () => {
  test('masked values match any value of their kind, and carried ones map to the real value', () => {
    const m = matcherFor([
      '{"token":"eyJhbGciOiJIUzI1NiJ9.eyJzaWQi…","id":"c80f2c2a021c|uoAmBXisRVLn_Fjxf-X4aJBsnyArQSm-E__XUqAc","at":"2026-11-23T15:53:47.766Z"}',
    ]);
    const carry = matchOutput(
      m,
      '{"token":"eyJa.eyJb.sig","id":"0123456789ab|' +
        'x'.repeat(40) +
        '","at":"2027-01-01T00:00:00.000Z"}\r\n',
    );
    expect(carry).toEqual(
      new Map([
        ['eyJhbGciOiJIUzI1NiJ9.eyJzaWQi…', 'eyJa.eyJb.sig'],
        ['eyJhbGciOiJIUzI1NiJ9.eyJzaWQi', 'eyJa.eyJb.sig'],
        ['c80f2c2a021c|uoAmBXisRVLn_Fjxf-X4aJBsnyArQSm-E__XUqAc', '0123456789ab|' + 'x'.repeat(40)],
      ]),
    );
  });

  test('"…" alone is any lines or none; notes and blank lines are not compared; ids are exact', () => {
    const m = matcherFor([
      'HTTP/1.1 201 Created',
      '…',
      'x-ratelimit-remaining: 298   (a note)',
      '…',
      '{"id":1}',
    ]);
    expect(matchOutput(m, 'HTTP/1.1 201 Created\nx-ratelimit-remaining: 12\n\n{"id":1}')).toBeDefined();
    expect(
      matchOutput(m, 'HTTP/1.1 201 Created\nvary: Origin\nx-ratelimit-remaining: 3\nDate: x\n\n{"id":1}'),
    ).toBeDefined();
    expect(matchOutput(m, 'HTTP/1.1 201 Created\nx-ratelimit-remaining: 3\n\n{"id":2}')).toBeUndefined();
    expect(firstMissingLine(m, 'HTTP/1.1 201 Created\nx-ratelimit-remaining: 3\n\n{"id":2}')).toEqual({
      index: 4,
      line: '{"id":1}',
    });
  });
});
