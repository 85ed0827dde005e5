import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..', '..');

/** Production sources: apps and libs, without tests and without the test doubles of libs/testing. */
function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!['node_modules', 'dist', 'test', 'public'].includes(entry.name)) sources(path, out);
    } else if (/\.ts$/.test(entry.name) && !/\.(spec|e2e-spec|fixture|d)\.ts$/.test(entry.name)) {
      out.push(path);
    }
  }
  return out;
}

const FILES = ['apps', 'libs']
  .flatMap((group) => readdirSync(join(ROOT, group)).map((name) => join(ROOT, group, name)))
  .filter((project) => !project.endsWith(join('libs', 'testing')))
  .flatMap((project) => {
    try {
      return sources(join(project, 'src'));
    } catch {
      return [];
    }
  });

/** Names of values that hold a secret, or reveal one. */
const SECRETISH =
  /reveal\(\)|secret|token|password|passwd|api_?key|authorization|bearer|credential/i;
const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

/** Comparisons with a constant (undefined, a literal, a typeof) test presence or shape, not a value. */
function isConstant(node: ts.Expression): boolean {
  return (
    ts.isLiteralExpression(node) ||
    ts.isNoSubstitutionTemplateLiteral(node) ||
    ts.isTypeOfExpression(node) ||
    node.kind === ts.SyntaxKind.NullKeyword ||
    node.kind === ts.SyntaxKind.TrueKeyword ||
    node.kind === ts.SyntaxKind.FalseKeyword ||
    (ts.isIdentifier(node) && (node.text === 'undefined' || /^[A-Z][A-Z0-9_]*$/.test(node.text))) ||
    (ts.isPrefixUnaryExpression(node) && ts.isNumericLiteral(node.operand))
  );
}

interface Finding {
  file: string;
  line: number;
  text: string;
}

function comparisonsOfSecrets(file: string): Finding[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(file, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const found: Finding[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
      const { left, right } = node;
      const mentionsSecret = SECRETISH.test(left.getText()) || SECRETISH.test(right.getText());
      if (mentionsSecret && !isConstant(left) && !isConstant(right)) {
        found.push({
          file: relative(ROOT, file),
          line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
          text: node.getText().replace(/\s+/g, ' '),
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * SPEC section 6: every secret comparison hashes both sides and compares the digests
 * with timingSafeEqual. The runtime tests prove it for each place a presented secret is
 * checked (webhook, gateway, admin); this one makes sure no other comparison of a
 * secret exists in the sources, a reload comparing an old and a new token included.
 */
describe('no secret is compared with === or !==', () => {
  it('finds the production sources', () => {
    expect(FILES.length).toBeGreaterThan(100);
    expect(FILES.some((f) => f.endsWith(join('libs', 'signing', 'src', 'secret-matcher.ts')))).toBe(
      true,
    );
  });

  it('compares secrets only through safeEqual / createSecretMatcher', () => {
    const findings = FILES.flatMap(comparisonsOfSecrets).map(
      (f) => `${f.file}:${f.line}: ${f.text}`,
    );
    expect(findings).toEqual([]);
  });

  it('the check itself sees a comparison of secrets', () => {
    const probe = join(ROOT, 'libs', 'signing', 'src', 'secret-comparison.security.spec.ts');
    const seen = comparisonsOfSecrets(probe).map((f) => f.text);
    // The line below is the probe: a comparison the check must report.
    const probeLine = (a: { reveal(): string }, b: { reveal(): string }) =>
      a.reveal() === b.reveal();
    expect(probeLine({ reveal: () => 'x' }, { reveal: () => 'x' })).toBe(true);
    expect(seen).toContain('a.reveal() === b.reveal()');
  });

  it('only the signing lib imports timingSafeEqual (the one comparison)', () => {
    const callers = FILES.filter((file) =>
      /import\s*\{[^}]*\btimingSafeEqual\b|\.timingSafeEqual\b|require\(['"](node:)?crypto/.test(
        readFileSync(file, 'utf8'),
      ),
    ).map((file) => relative(ROOT, file));
    expect(callers).toEqual([join('libs', 'signing', 'src', 'secret-matcher.ts')]);
  });
});
