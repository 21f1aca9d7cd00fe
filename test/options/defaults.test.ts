import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Defaults are declared once, as exported `*_DEFAULTS` constants (each pinned by its policy's
 * test). An options interface documents a default with `@default` — and where it writes the
 * value out (so that an editor shows it on hover) this test holds the two together: the
 * literal must equal the constant's. The constant's own fields carry no second `@default`.
 */
const src = fileURLToPath(new URL('../../src/', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

interface Finding {
  file: string;
  constant: string;
  values: Map<string, string>;
  /** Fields of the constant with a JSDoc `@default` of their own. */
  redundant: string[];
}

function literal(node: ts.Expression): string | undefined {
  if (ts.isNumericLiteral(node)) return String(Number(node.text));
  if (ts.isStringLiteral(node)) return `'${node.text}'`;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return 'true';
  if (node.kind === ts.SyntaxKind.FalseKeyword) return 'false';
  return undefined;
}

function defaultsIn(file: string, source: ts.SourceFile): Finding[] {
  const found: Finding[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const d of statement.declarationList.declarations) {
      if (!ts.isIdentifier(d.name) || !d.name.text.endsWith('_DEFAULTS') || d.initializer === undefined) continue;
      let init: ts.Expression = d.initializer;
      while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isCallExpression(init)) {
        init = ts.isCallExpression(init) ? (init.arguments[0] as ts.Expression) : init.expression;
      }
      if (!ts.isObjectLiteralExpression(init)) continue;
      const values = new Map<string, string>();
      const redundant: string[] = [];
      for (const p of init.properties) {
        if (!ts.isPropertyAssignment(p) || !ts.isIdentifier(p.name)) continue;
        const value = literal(p.initializer);
        if (value !== undefined) values.set(p.name.text, value);
        if (ts.getJSDocTags(p).some((t) => t.tagName.text === 'default')) redundant.push(p.name.text);
      }
      found.push({ file, constant: d.name.text, values, redundant });
    }
  }
  return found;
}

/** `@default` literals written in the file's interfaces, by property name. */
function documented(source: ts.SourceFile): Array<{ name: string; text: string }> {
  const out: Array<{ name: string; text: string }> = [];
  for (const statement of source.statements) {
    if (!ts.isInterfaceDeclaration(statement)) continue;
    for (const member of statement.members) {
      if (!ts.isPropertySignature(member) || !ts.isIdentifier(member.name)) continue;
      for (const tag of ts.getJSDocTags(member)) {
        if (tag.tagName.text !== 'default') continue;
        const text = ts.getTextOfJSDocComment(tag.comment)?.trim() ?? '';
        out.push({ name: member.name.text, text });
      }
    }
  }
  return out;
}

/** The literal a `@default` starts with (`10_000 (10 s)` ⇒ `10000`), or undefined for a reference. */
function leadingLiteral(text: string): string | undefined {
  const number = /^-?[\d_]+(\.\d+)?(?![\w.])/.exec(text);
  if (number) return String(Number(number[0].replace(/_/g, '')));
  const word = /^(true|false|'[^']*')(?!\w)/.exec(text);
  return word?.[1];
}

const sources = files(src).map((file) => ({
  file: file.slice(src.length),
  source: ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true),
}));
const constants = sources.flatMap(({ file, source }) => defaultsIn(file, source));

describe('defaults are declared once', () => {
  it('finds the defaults constants', () => {
    expect(constants.map((c) => c.constant)).toEqual(
      expect.arrayContaining(['DOWNSTREAM_DEFAULTS', 'CIRCUIT_BREAKER_DEFAULTS', 'RETRY_DEFAULTS', 'PACER_DEFAULTS']),
    );
  });

  it('no constant field carries a second @default (its value is the documentation)', () => {
    const twice = constants.flatMap((c) => c.redundant.map((name) => `${c.file}: ${c.constant}.${name}`));
    expect(twice).toEqual([]);
  });

  it("every @default literal in an options interface equals the constant's value", () => {
    const mismatches: string[] = [];
    let checked = 0;
    for (const { file, source } of sources) {
      const own = constants.filter((c) => c.file === file);
      if (own.length === 0) continue;
      for (const { name, text } of documented(source)) {
        const written = leadingLiteral(text);
        if (written === undefined) continue;
        const holders = own.filter((c) => c.values.has(name));
        if (holders.length === 0) continue;
        checked++;
        if (!holders.some((c) => c.values.get(name) === written)) {
          mismatches.push(
            `${file}: \`${name}\` documented @default ${text}, declared ${holders.map((c) => `${c.constant}.${name} = ${c.values.get(name)}`).join(' / ')}`,
          );
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(20); // the check reads what it should
  });

  it('a documented default that differs from its constant is caught', () => {
    expect(leadingLiteral('10_000 (10 s)')).toBe('10000');
    expect(leadingLiteral("'consecutive'")).toBe("'consecutive'");
    expect(leadingLiteral('DEFAULT_SECRET_QUERY_PARAMS')).toBeUndefined();
    expect(leadingLiteral('0.85')).not.toBe(String(0.8));
  });
});
