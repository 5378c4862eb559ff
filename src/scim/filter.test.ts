import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { compileFilter, USER_CATALOGUE } from './compile-filter.ts';
import { MAX_FILTER_COMPARISONS, parseFilter, parsePatchPath } from './filter.ts';
import { ENTERPRISE_USER } from './schemas.ts';

const compiler = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});
const compiled = (filter: string) => sql`select 1 where ${compileFilter(USER_CATALOGUE, parseFilter(filter))}`.compile(compiler);

test('precedence: not binds tightest, then and, then or; parentheses group', () => {
  const f = parseFilter('a eq "1" or b eq "2" and not (c pr)');
  assert.equal(f.kind, 'or');
  assert.equal(f.kind === 'or' && f.right.kind, 'and');
  const g = parseFilter('(a eq "1" or b eq "2") and c pr');
  assert.equal(g.kind, 'and');
});

test('literals, URN-qualified paths and value paths', () => {
  assert.deepEqual(parseFilter('active eq TRUE'), { kind: 'compare', path: { schema: null, attr: 'active', sub: null }, op: 'eq', value: true });
  assert.deepEqual(parseFilter(`${ENTERPRISE_USER}:manager.value eq "x\\"y"`), {
    kind: 'compare',
    path: { schema: ENTERPRISE_USER, attr: 'manager', sub: 'value' },
    op: 'eq',
    value: 'x"y',
  });
  const vp = parseFilter('emails[type eq "work" and value co "@"]');
  assert.equal(vp.kind, 'valuePath');
  assert.deepEqual(parsePatchPath('emails[type eq "work"].value').subAfterFilter, 'value');
  assert.equal(parsePatchPath(`${ENTERPRISE_USER}:employeeNumber`).path.attr, 'employeenumber');
});

test('values are bound parameters, never SQL text', () => {
  const hostile = `x' or 1=1; drop table users; --`;
  const q = compiled(`userName eq "${hostile}" or emails[value co "%_\\\\"] or externalId sw "a"`);
  assert.ok(!q.sql.includes('drop table'), q.sql);
  assert.ok(!q.sql.includes('%_'), q.sql);
  assert.deepEqual(q.parameters, [hostile, '%_\\', 'a']);
});

test('bounds: length, depth, comparisons; linear-time scanning of long input', () => {
  assert.throws(() => parseFilter('x'.repeat(3000)), /longer than/);
  assert.throws(() => parseFilter(`${'('.repeat(9)}a pr${')'.repeat(9)}`), /deeper/);
  assert.throws(() => parseFilter(Array.from({ length: MAX_FILTER_COMPARISONS + 1 }, () => 'a pr').join(' or ')), /comparisons/);
  const started = performance.now();
  assert.throws(() => parseFilter(`a eq "${'\\"'.repeat(1000)}`));
  assert.throws(() => parseFilter('a eq "b" '.repeat(200)));
  assert.ok(performance.now() - started < 1000);
});
