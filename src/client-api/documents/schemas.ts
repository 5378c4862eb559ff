// TypeBox schemas of the Client API's bodies and answers, named as OpenAPI components. Document models
// and views are derived from the registry's field tables, so the schema and the write agree.
import { type Static, type TSchema, Type } from 'typebox';
import { nullable } from '../../domain/fields.ts';
import { named } from '../../platform/http/openapi.ts';
import { Guid } from '../../platform/http/schemas.ts';
import { wrapped } from './envelope.ts';
import { fieldSchema, modelProperties, viewProperties } from './fields.ts';
import type { DocumentDef } from './registry.ts';

const S = (description?: string) => Type.String(description ? { description } : {});
const Id = Type.String({ format: 'uuid' });
const NullableId = nullable(Type.String({ format: 'uuid' }));
const Stamp = Type.String({ format: 'date-time' });
const AnyValue = Type.Unsafe<unknown>({ description: 'A JSON scalar of the field’s type' });

export const UserFieldValuesMap = Type.Object({}, { additionalProperties: true, description: 'Custom field values by ColumnName (null clears one)' });

export const BriefModel = Type.Object(
  {
    DocumentTypeName: Type.Optional(nullable(S())),
    Text: Type.Optional(nullable(Type.String({ description: 'HTML' }))),
    PlainText: Type.Optional(nullable(S())),
  },
  { additionalProperties: false, description: 'A new version of the document’s brief (nothing when Text is empty)' },
);

/** The model of a document type in v3 creates, PATCH-free updates and a post's Actions.Document. */
export function documentModel(def: DocumentDef): TSchema {
  if (def.model) return def.model;
  return named(
    `${def.type}Model`,
    Type.Object(
      {
        Id: Type.Optional(
          nullable(Type.String({ format: 'uuid', description: 'With DocumentActionType Put: the document to change (default the post’s DocumentId)' })),
        ),
        ...modelProperties(def.fields),
        ...modelProperties(def.extras ?? []),
        DocumentUserFieldValues: Type.Optional(nullable(UserFieldValuesMap)),
        DocumentBrief: Type.Optional(nullable(BriefModel)),
      },
      {
        additionalProperties: false,
        description: `Required on create: ${def.fields
          .filter((f) => f.required)
          .map((f) => f.name)
          .join(', ')}.`,
      },
    ),
  );
}

export function documentPatch(def: DocumentDef): TSchema {
  const props: Record<string, TSchema> = {};
  for (const f of [...def.fields, ...(def.extras ?? [])])
    for (const name of [f.name, ...(f.aliases ?? [])]) props[name] = Type.Optional(wrapped(fieldSchema(f)));
  props.DocumentUserFieldValues = Type.Optional(wrapped(UserFieldValuesMap));
  return named(`${def.type}PatchBody`, Type.Object(props, { additionalProperties: false }));
}

export function documentView(def: DocumentDef, extra: Record<string, TSchema> = {}): TSchema {
  return named(
    def.type,
    Type.Object({
      Id,
      ...viewProperties(def.fields),
      ...extra,
      WorkflowId: NullableId,
      StageId: NullableId,
      Stage: nullable(S()),
      StageTypeId: NullableId,
      StageType: nullable(S('Draft, In Progress, Completed, Canceled…')),
      FileSystemRootId: { ...NullableId, description: 'The document’s root folder (POST /api/v3/file-system/folders/{folderId}/links)' } as TSchema,
      DocumentUserFieldValues: UserFieldValuesMap,
      CreatedOnUtc: Stamp,
      CreatedById: NullableId,
      ModifiedOnUtc: Stamp,
      ModifiedById: NullableId,
    }),
  );
}

export const ProjectExtraView = {
  ProjectOwnerId: NullableId,
  ProjectManagerId: NullableId,
  ProjectType: Type.Integer({ description: '0 Isolated, 1 Contract (has a ContractId)' }),
};

export const TransitionAction = Type.Object(
  { StatusId: Type.Optional(nullable(Guid)), TransitionId: Type.Optional(nullable(Guid)) },
  {
    additionalProperties: false,
    description: 'TransitionId runs that transition (StatusId, when sent, must be its destination); StatusId alone sets the stage directly',
  },
);

export const PostFile = named(
  'PostFile',
  Type.Object(
    {
      Id: Type.Optional(nullable(Guid)),
      Name: Type.Optional(nullable(Type.String({ maxLength: 400 }))),
      Link: Type.Optional(nullable(Type.String({ maxLength: 4000, description: 'An http(s) URL: a link is added to the document’s root folder' }))),
      IsTemp: Type.Optional(nullable(Type.Boolean())),
      IsFlagged: Type.Optional(nullable(Type.Boolean())),
      ExternalId: Type.Optional(nullable(Type.String({ maxLength: 400 }))),
    },
    { additionalProperties: false },
  ),
);

export function postBody(defs: DocumentDef[]) {
  const models: Record<string, TSchema> = {};
  for (const d of defs) for (const name of new Set([d.type, d.className])) models[name] = Type.Optional(nullable(documentModel(d)));
  return named(
    'PostBody',
    Type.Object(
      {
        DocumentId: Type.Optional(nullable(Guid)),
        DocumentTypeName: Type.String({
          minLength: 1,
          maxLength: 200,
          description: `${defs.map((d) => d.type).join(', ')} (class and full type names accepted)`,
        }),
        Text: Type.Optional(nullable(Type.String({ maxLength: 100000 }))),
        IsVisibleToClient: Type.Optional(nullable(Type.Boolean())),
        Actions: Type.Optional(
          nullable(
            Type.Object(
              {
                Transition: Type.Optional(nullable(TransitionAction)),
                Document: Type.Optional(
                  nullable(
                    Type.Object(
                      {
                        DocumentType: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
                        DocumentActionType: Type.Optional(nullable(Type.String({ description: 'Post (create, the default) or Put (update)' }))),
                        DocumentBrief: Type.Optional(nullable(BriefModel)),
                        ...models,
                      },
                      { additionalProperties: false },
                    ),
                  ),
                ),
                Files: Type.Optional(nullable(Type.Array(PostFile, { maxItems: 100 }))),
                Motive: Type.Optional(nullable(Type.Object({ Id: Type.Optional(nullable(Guid)) }, { additionalProperties: false }))),
                Notifications: Type.Optional(nullable(Type.Array(Type.Object({ UserId: Guid }, { additionalProperties: false }), { maxItems: 500 }))),
              },
              { additionalProperties: false },
            ),
          ),
        ),
      },
      { additionalProperties: false },
    ),
  );
}

/** A post as its schema admits it (each document type's model under its name in Actions.Document). */
export type PostBody = Static<ReturnType<typeof postBody>>;

export const Post = named(
  'Post',
  Type.Object({
    Id,
    CreatedById: NullableId,
    CreatedByName: nullable(S()),
    CreatedOnUtc: Stamp,
    ModifiedOnUtc: Stamp,
    Text: S(),
    IsVisibleToClient: Type.Boolean(),
    DocumentId: Id,
    DocumentTypeName: nullable(S()),
    Actions: Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'What the post did: Document {DocumentType, DocumentActionType, Id}, Transition {StatusId, TransitionId}, Files, Motive, Notifications',
      },
    ),
  }),
);

export const BriefBody = named(
  'DocumentBriefBody',
  Type.Object(
    {
      DocumentId: Guid,
      DocumentTypeName: Type.String({ minLength: 1, maxLength: 200 }),
      Text: Type.String({ maxLength: 1000000, description: 'HTML' }),
      PlainText: Type.Optional(nullable(Type.String({ maxLength: 1000000, description: 'Derived from Text when not sent' }))),
      Actions: Type.Optional(
        nullable(Type.Object({ Files: Type.Optional(nullable(Type.Array(PostFile, { maxItems: 100 }))) }, { additionalProperties: false })),
      ),
    },
    { additionalProperties: false },
  ),
);

export const Brief = named(
  'DocumentBrief',
  Type.Object({
    Id,
    DocumentId: Id,
    CreatedById: NullableId,
    CreatedByName: nullable(S()),
    EditedOn: Stamp,
    Text: nullable(S('HTML')),
    PlainText: nullable(S()),
    Version: Type.Integer(),
    Actions: Type.Unsafe<unknown>({ description: 'Files linked with this version (null when none)' }),
  }),
);

export const AssignmentBatchBody = named(
  'AssignmentBatchBody',
  Type.Object(
    {
      AssignmentPostModels: Type.Optional(
        nullable(
          Type.Array(
            Type.Object(
              {
                User: Guid,
                DocumentType: Type.String({
                  minLength: 1,
                  maxLength: 200,
                  description: 'Full type name (Skill.Module.BusinessObjects.Project), class or Client API name',
                }),
                DocumentOid: Guid,
                AssignmentType: Type.String({ minLength: 1, maxLength: 200, description: 'Team name' }),
                Workload: Type.Optional(nullable(Type.Number({ description: 'Accepted; planned workload is not set by this call' }))),
                Priority: Type.Optional(nullable(Type.Number({ description: 'Accepted, not stored' }))),
              },
              { additionalProperties: false },
            ),
            { maxItems: 1000 },
          ),
        ),
      ),
      AssignmentDeleteModels: Type.Optional(
        nullable(Type.Array(Type.Object({ User: Guid, DocumentId: Guid, AssignmentTypeId: Guid }, { additionalProperties: false }), { maxItems: 1000 })),
      ),
    },
    { additionalProperties: false },
  ),
);

export const AssignmentBatch = named(
  'AssignmentBatch',
  Type.Object({
    AssignmentPostModels: Type.Array(
      Type.Object({
        Id,
        User: Id,
        DocumentType: S(),
        DocumentOid: Id,
        AssignmentTypeId: Id,
        AssignmentType: S(),
        Added: Type.Boolean({ description: 'false: was already on the team' }),
      }),
    ),
    AssignmentDeleteModels: Type.Array(
      Type.Object({ User: Id, DocumentId: Id, AssignmentTypeId: Id, Removed: Type.Boolean({ description: 'false: was not on the team' }) }),
    ),
  }),
);

export const UserFieldValuesBody = named(
  'DocumentUserFieldValuesBody',
  Type.Object(
    {
      DocumentTypeName: Type.String({ minLength: 1, maxLength: 200 }),
      DocumentId: Guid,
      DocumentUserFieldValues: Type.Array(
        Type.Object(
          {
            ColumnName: Type.String({ minLength: 1, maxLength: 200 }),
            Value: Type.Optional(AnyValue),
            ColumnDataTypeId: Type.Optional(nullable(Type.Integer({ minimum: 0, maximum: 9, description: 'Accepted; the field’s own type decides' }))),
          },
          { additionalProperties: false },
        ),
        { maxItems: 500 },
      ),
    },
    { additionalProperties: false },
  ),
);

export const UserFieldValues = named(
  'DocumentUserFieldValues',
  Type.Object({
    DocumentTypeName: S(),
    DocumentId: Id,
    DocumentUserFieldValues: Type.Array(
      Type.Object({
        ColumnName: S(),
        Value: AnyValue,
        ColumnDataTypeId: Type.Integer({
          description: 'Boolean 0, Date 1, Float 2, Integer 3, Money 4, Varchar50 5, Varchar100 6, VarcharMax 7, Text 8, UniqueIdentifier 9',
        }),
      }),
    ),
  }),
);

export const LinkBody = named(
  'FileLinkBody',
  Type.Object(
    {
      FolderId: Type.Optional(nullable(Guid)),
      Name: Type.Optional(nullable(Type.String({ maxLength: 400, description: 'Default: the last segment of the URL' }))),
      SourceUri: Type.String({ minLength: 1, maxLength: 4000, description: 'An http(s) URL' }),
      IsFlagged: Type.Optional(nullable(Type.Boolean())),
      IsProtected: Type.Optional(nullable(Type.Boolean())),
      ExternalId: Type.Optional(nullable(Type.String({ maxLength: 400 }))),
      Description: Type.Optional(nullable(Type.String({ maxLength: 4000 }))),
    },
    { additionalProperties: false },
  ),
);

/** A file link as its schema admits it. */
export type LinkInput = Static<typeof LinkBody>;

export const FileLink = named(
  'FileLink',
  Type.Object({
    Id,
    FolderId: Id,
    Name: S(),
    SourceUri: nullable(S()),
    IsFlagged: Type.Boolean(),
    IsProtected: Type.Boolean(),
    ExternalId: nullable(S()),
    Description: nullable(S()),
    DocumentId: NullableId,
    DocumentTypeName: nullable(S()),
    CreatedOnUtc: Stamp,
    CreatedById: NullableId,
  }),
);

const TransitionView = named(
  'WorkflowTransition',
  Type.Object({
    Id,
    WorkflowId: Id,
    Name: S(),
    LocalizedName: S(),
    FromStageId: Id,
    FromStage: S(),
    ToStageId: Id,
    ToStage: S(),
    Order: Type.Integer(),
    RequestConfirmation: Type.Boolean(),
    MustSendNotification: Type.Boolean(),
    CommentRequired: Type.Boolean({ description: 'A post running it must carry Text (422 otherwise)' }),
    HoursRequired: Type.Boolean(),
    FileUploadRequired: Type.Boolean({ description: 'A post running it must carry Actions.Files (422 otherwise)' }),
    FileUploadFolder: nullable(S()),
    Motives: Type.Array(Type.Unknown()),
    Roles: Type.Array(Type.Unknown(), { description: 'Role names allowed to run it (none: anyone who may write in the stage)' }),
    TypeIds: Type.Array(Id, { description: 'Types (job_types) it is limited to (none: all)' }),
  }),
);
export const Transitions = Type.Array(TransitionView);

export const Workflows = Type.Array(
  named(
    'Workflow',
    Type.Object({
      Id,
      Name: S(),
      IsDefault: Type.Boolean(),
      ExternalId: nullable(S()),
      DocumentTypeId: Id,
      DocumentTypeName: S(),
      Stages: Type.Array(
        Type.Object({
          Id,
          Name: S(),
          LocalizedName: S(),
          Color: nullable(S()),
          Order: Type.Integer(),
          IsInitial: Type.Boolean(),
          ExternalId: nullable(S()),
          StageTypeId: Id,
          StageType: S(),
          StageTypeColor: nullable(S()),
          AllowWriteTeams: Type.Array(Type.Object({ Id, Name: S() }), {
            description: 'Teams that may change a document in this stage (none: anyone with the Write role)',
          }),
        }),
      ),
      Transitions: Type.Optional(Type.Array(TransitionView, { description: 'With expandTransitions=true' })),
    }),
  ),
);

const N = <T extends TSchema>(x: T) => nullable(x);
export const ProjectTemplate = named(
  'ProjectTemplate',
  Type.Object(
    {
      Name: S('The contract’s name'),
      ContractId: Id,
      CompanyId: Id,
      ClientId: Id,
      BrandId: NullableId,
      ProductId: NullableId,
      DepartmentId: { ...NullableId, description: 'The acting user’s department, when in the contract’s company' } as TSchema,
      CurrencyId: { ...NullableId, description: 'The contract’s, else the company’s' } as TSchema,
      JobTypeId: NullableId,
      JobClassificationId: NullableId,
      BusinessObjectTypeId: { ...NullableId, description: 'The project document type’s default business object type' } as TSchema,
      EntryDate: Type.String({ format: 'date', description: 'Today' }),
      AgreedDate: N(Type.String({ format: 'date' })),
      RequestedDate: N(Type.String({ format: 'date' })),
      BeginDateUtc: Type.String({ format: 'date', description: 'The contract’s start, else today' }),
      EndDateUtc: N(Type.String({ format: 'date' })),
      Investment: Type.Number({ description: 'Money: the amount invested' }),
      IsDraft: Type.Boolean(),
      Plannable: Type.Boolean(),
      Priority: Type.Integer(),
      Effort: N(Type.Number()),
      BusinessValue: N(Type.Integer()),
      AllowsTimesheet: Type.Boolean(),
      IsDeliverable: Type.Boolean(),
      IsActivated: Type.Boolean(),
      MarketId: NullableId,
      ProjectType: Type.Integer({ description: '1 Contract' }),
      DocumentUserFieldValues: { ...UserFieldValuesMap, description: 'Every custom field of projects, null' } as TSchema,
    },
    { description: 'A project model: send it (changed as needed) as a CreateModel of POST /api/v3/projects; properties a project does not store are ignored' },
  ),
);

/** What a document's GET answers and its PATCH does not change, with the reason (X-Read-Only-Properties). */
export const DOCUMENT_READ_ONLY: Readonly<Record<string, string>> = {
  Id: 'the document’s identity',
  WorkflowId: 'set when the document is created from its type',
  StageId: 'moved by a transition: POST /api/posts with Actions.Transition',
  Stage: 'moved by a transition: POST /api/posts with Actions.Transition',
  StageTypeId: 'follows from the stage',
  StageType: 'follows from the stage',
  FileSystemRootId: 'made with the document; links go in with POST /api/v3/file-system/folders/{folderId}/links',
  CreatedOnUtc: 'kept by the server',
  CreatedById: 'kept by the server',
  ModifiedOnUtc: 'kept by the server',
  ModifiedById: 'kept by the server',
};

/** An estimate's answer also carries its items, totals and billing conditions, each written by its own route. */
export const ESTIMATE_READ_ONLY: Readonly<Record<string, string>> = {
  ...DOCUMENT_READ_ONLY,
  Items: 'written by PUT /api/estimates/{id}/items',
  Totals: 'follow from the items and quote lines',
  BillingConditions: 'written by POST /api/billing-conditions',
};
