import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Regression: the README's `docs/*.md` links were dead on the registry page and in the
 * installed package. README links are absolute (the registry renders only the README), point
 * into this repository's `main`, name files that exist and ship in the package, and their
 * anchors name real headings. package.json's repository, homepage and bugs agree.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  repository: { url: string };
  homepage: string;
  bugs: { url: string };
  files: string[];
};
const REPO = 'https://github.com/kindly-calls/kindly-calls';
const readme = readFileSync(`${root}README.md`, 'utf8');
const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

describe('README links work on the repository and the registry page', () => {
  it('package.json names the repository, homepage and issue tracker consistently', () => {
    expect(pkg.repository.url).toBe(`git+${REPO}.git`);
    expect(pkg.homepage).toBe(`${REPO}#readme`);
    expect(pkg.bugs.url).toBe(`${REPO}/issues`);
  });

  it('every link is absolute and points into the repository or to a real web page', () => {
    expect(links.length).toBeGreaterThanOrEqual(5);
    for (const link of links) expect(link, link).toMatch(/^https:\/\//);
  });

  it('every repository link names a file that exists and ships in the package, and a real heading', () => {
    const inRepo = links.filter((l) => l.startsWith(`${REPO}/blob/main/`));
    expect(inRepo.length).toBeGreaterThanOrEqual(5);
    for (const link of inRepo) {
      const [path, hash] = link.slice(`${REPO}/blob/main/`.length).split('#') as [string, string | undefined];
      expect(existsSync(`${root}${path}`), `${link}: ${path} exists`).toBe(true);
      expect(
        pkg.files.some((f) => path === f || path.startsWith(`${f}/`)),
        `${path} is in package.json files`,
      ).toBe(true);
      if (hash !== undefined) {
        const headings = [...readFileSync(`${root}${path}`, 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1] as string));
        expect(headings, `${link}: #${hash}`).toContain(hash);
      }
    }
  });
});
