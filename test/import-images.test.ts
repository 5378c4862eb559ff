// `atrium import` and images (decision 0064): the source's image flags come back as placeholder files the
// entities point at, counted in the report; such a file is answered like any other where files are read;
// an image removed (or added) on the source is cleared (or carried) by a --since pass. Leaves' approvers
// come back by name. One server, two tenants (HTTP only between them, as the import always is).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SOURCE_IMAGES_FOLDER, sourceImageFileId } from '../src/import/mappings/images.ts';
import { runImport } from '../src/import/service.ts';
import type { Trx } from '../src/platform/db/database.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { appHeaders, namedQueryRows as rowsOf, startTestServer, type TestServer } from './helpers.ts';

/** The column's values by key, sorted (what the import must give back). */
const column = (rows: Record<string, unknown>[], key: string, col: string) => rows.map((r) => `${r[key]}=${JSON.stringify(r[col])}`).sort();

describe('atrium import: images held by the source, approvers', () => {
  let server: TestServer;
  let from: TenantCredentials;
  let into: TenantCredentials;
  const importInto = (since?: string) =>
    runImport(server.runtime.ctx.db, {
      source: { baseUrl: server.baseUrl, tenantId: from.tenantId, appId: from.appId, appSecret: from.appSecret },
      tenantId: into.tenantId,
      since,
    });
  const onSource = <T>(fn: (trx: Trx) => Promise<T>) => server.runtime.ctx.db.withTenant(from.tenantId, fn);
  const onTarget = <T>(fn: (trx: Trx) => Promise<T>) => server.runtime.ctx.db.withTenant(into.tenantId, fn);

  before(async () => {
    server = await startTestServer();
    from = await server.createTenant('Image Source', { demoData: true, scale: 0.01 });
    into = await server.createTenant('Image Target');
  });
  after(async () => {
    await server?.close();
  });

  test('flags come back as placeholder files, counted in the report; a placeholder is answered where files are read', async () => {
    const report = await importInto();
    const held = await onTarget((trx) =>
      trx
        .selectFrom('users')
        .select(['id', 'image_file_id'])
        .where('image_file_id', 'is not', null)
        .unionAll(trx.selectFrom('companies').select(['id', 'image_file_id']).where('image_file_id', 'is not', null))
        .unionAll(trx.selectFrom('commercial_clients').select(['id', 'image_file_id']).where('image_file_id', 'is not', null))
        .execute(),
    );
    assert.ok(held.length > 0, 'the demo tenant shows images');
    const images = report.notCarriedOver.find((n) => n.what.startsWith('images'));
    assert.equal(images?.count, held.length, JSON.stringify(images));
    assert.match(images?.what ?? '', new RegExp(`${held.length} images to upload again`));
    // Each is the entity's own placeholder: no bytes, no link, in the import's folder; and the source has an image there.
    const files = await onTarget((trx) => trx.selectFrom('files').select(['id', 'folder_id', 'storage_key', 'link_url', 'name']).execute());
    for (const h of held) {
      const f = files.find((x) => x.id === h.image_file_id);
      assert.ok(f && f.folder_id === SOURCE_IMAGES_FOLDER && f.storage_key === null && f.link_url === null, JSON.stringify(f));
    }
    assert.equal(files.filter((f) => f.folder_id === SOURCE_IMAGES_FOLDER).length, held.length, 'one placeholder per entity, none left over');
    const withImage = await onSource((trx) =>
      trx
        .selectFrom('users')
        .select('id')
        .where('image_file_id', 'is not', null)
        .unionAll(trx.selectFrom('companies').select('id').where('image_file_id', 'is not', null))
        .unionAll(trx.selectFrom('commercial_clients').select('id').where('image_file_id', 'is not', null))
        .execute(),
    );
    const sourceIds = new Set(withImage.map((r) => r.id));
    for (const h of held) assert.ok(sourceIds.has(h.id), `${h.id} has an image on the source`);

    // The flags read the same on both sides (the full comparison is test/import.test.ts).
    for (const [q, key, col] of [
      ['DE-Companies', 'CompanyId', 'CompanyHasImage'],
      ['DE-Jobs', 'JobId', 'CreatedByHasImage'],
      ['DE-Projects', 'ProjectId', 'ClientHasImage'],
      ['DE-Leaves', 'LeaveId', 'Approvers'],
      ['DE-Projects', 'ProjectId', 'RateCardColumn'],
    ]) {
      assert.deepEqual(column(await rowsOf(server, into, q), key, col), column(await rowsOf(server, from, q), key, col), `${q} ${col}`);
    }

    // A placeholder is a file like any other where files are read: a post links it by id (no link, its name).
    const [job] = await rowsOf(server, into, 'DE-Jobs');
    const post = await server.request('POST', '/api/posts', {
      headers: appHeaders(into),
      json: { DocumentId: job.JobId, DocumentTypeName: 'Job', Text: 'The logo', Actions: { Files: [{ Id: held[0].image_file_id }] } },
    });
    assert.equal(post.status, 201, post.text);
    assert.equal(post.body.Actions.Files[0].Id, held[0].image_file_id);
    assert.equal(post.body.Actions.Files[0].Link, null);
    assert.match(post.body.Actions.Files[0].Name, /held by the source/);
  });

  test('--since: an image removed on the source is cleared, one added is carried', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const [company] = await rowsOf(server, from, 'DE-Companies').then((rows) => rows.filter((r) => r.CompanyHasImage === true));
    assert.ok(company, 'a company with an image');
    // A comment's author without an image gets one (DE-Comments shows it).
    const author = (await rowsOf(server, from, 'DE-Comments')).find((r) => r.CreatedByHasImage === false && r.CreatedById);
    assert.ok(author, 'a comment author without an image');
    await onSource(async (trx) => {
      await trx.updateTable('companies').set({ image_file_id: null }).where('id', '=', String(company.CompanyId)).execute();
      const folder = await trx.insertInto('folders').values({ tenant_id: from.tenantId, name: 'Avatars' }).returning('id').executeTakeFirstOrThrow();
      const file = await trx
        .insertInto('files')
        .values({ tenant_id: from.tenantId, folder_id: folder.id, name: 'avatar.png', content_type: 'image/png', storage_key: 'images/new.png' })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx.updateTable('users').set({ image_file_id: file.id }).where('id', '=', String(author.CreatedById)).execute();
    });
    await importInto(since);
    const [c, u, placeholder] = await onTarget(async (trx) => [
      await trx.selectFrom('companies').select('image_file_id').where('id', '=', String(company.CompanyId)).executeTakeFirstOrThrow(),
      await trx.selectFrom('users').select('image_file_id').where('id', '=', String(author.CreatedById)).executeTakeFirstOrThrow(),
      await trx
        .selectFrom('files')
        .select('id')
        .where('id', '=', sourceImageFileId('companies', String(company.CompanyId)))
        .executeTakeFirst(),
    ]);
    assert.equal(c.image_file_id, null);
    assert.equal(placeholder, undefined, "the company's placeholder is gone");
    assert.equal(u.image_file_id, sourceImageFileId('users', String(author.CreatedById)));
    for (const [q, key, col] of [
      ['DE-Companies', 'CompanyId', 'CompanyHasImage'],
      ['DE-Comments', 'CommentsId', 'CreatedByHasImage'],
    ]) {
      assert.deepEqual(column(await rowsOf(server, into, q), key, col), column(await rowsOf(server, from, q), key, col), `${q} ${col}`);
    }
    const again = await importInto();
    assert.equal(again.changedRows, 0, JSON.stringify(again.queries.filter((q) => q.rowsWritten + q.rowsDeleted > 0)));
  });

  test("a leave's approver shares a name with another user: resolved to one of them, the column reads the same", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const leave = (await rowsOf(server, from, 'DE-Leaves')).find((r) => typeof r.Approvers === 'string');
    assert.ok(leave, 'an approved leave');
    // A namesake of the approver appears on the source, and the leave changes (so --since reads it again).
    await onSource(async (trx) => {
      const approver = await trx
        .selectFrom('approvals')
        .innerJoin('users', 'users.id', 'approvals.approver_id')
        .select(['users.name', 'users.user_name', 'users.company_id'])
        .where('approvals.document_id', '=', String(leave.LeaveId))
        .where('approvals.status', '=', 'Approved')
        .where('approvals.role', '=', 'Approver')
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('users')
        .values({ tenant_id: from.tenantId, user_name: `namesake-${Date.now()}`, name: approver.name ?? approver.user_name, company_id: approver.company_id })
        .execute();
      await trx.updateTable('leaves').set({ modified_on_utc: new Date() }).where('id', '=', String(leave.LeaveId)).execute();
    });
    const report = await importInto(since);
    assert.deepEqual(
      report.leftOut.filter((l) => l.startsWith('DE-Leaves')),
      [],
    );
    assert.deepEqual(
      column(await rowsOf(server, into, 'DE-Leaves'), 'LeaveId', 'Approvers'),
      column(await rowsOf(server, from, 'DE-Leaves'), 'LeaveId', 'Approvers'),
    );
    const again = await importInto();
    assert.equal(again.changedRows, 0, JSON.stringify(again.queries.filter((q) => q.rowsWritten + q.rowsDeleted > 0)));
  });
});
