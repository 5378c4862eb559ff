// What Atrium's SCIM service provider supports, in one place: the schemas' attributes (what discovery
// answers at /Schemas, and what bodies and paths are checked against), the resource types and the service
// provider configuration with its limits. An attribute Atrium accepts but does not keep is declared
// writeOnly / returned "never", so discovery says exactly what comes back.

export const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE_USER = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const BULK_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
export const BULK_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:BulkResponse';

/** Limits, announced in /ServiceProviderConfig and enforced before anything is allocated for them. */
export const LIMITS = {
  maxResults: 200,
  bulkMaxOperations: 1000,
  bulkMaxPayloadSize: 1024 * 1024,
  resourceMaxPayloadSize: 256 * 1024,
  maxAttributesListed: 100,
  maxMultiValues: 20,
  maxPatchOperations: 100,
  maxStringLength: 4000,
};

type AttrType = 'string' | 'boolean' | 'complex' | 'reference' | 'dateTime';

export interface AttrDef {
  name: string;
  type: AttrType;
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned?: 'always' | 'never' | 'default' | 'request';
  uniqueness?: 'none' | 'server' | 'global';
  description: string;
  subAttributes?: AttrDef[];
  referenceTypes?: string[];
  canonicalValues?: string[];
}

/** Accepted, never stored nor returned: identity providers send them whatever Atrium keeps. */
const accepted = (name: string, type: AttrType = 'string', multiValued = false): AttrDef => ({
  name,
  type,
  multiValued,
  mutability: 'writeOnly',
  returned: 'never',
  description: 'Accepted and ignored: Atrium does not keep it.',
  ...(type === 'complex' ? { subAttributes: [] } : {}),
});

const multi = (what: string, mapped: string): AttrDef[] => [
  { name: 'value', type: 'string', description: `The ${what}. ${mapped}` },
  { name: 'type', type: 'string', canonicalValues: ['work', 'home', 'other', 'mobile'], description: 'A label; Atrium answers "work".' },
  { name: 'primary', type: 'boolean', description: 'The preferred value.' },
  { name: 'display', type: 'string', mutability: 'writeOnly', returned: 'never', description: 'Accepted and ignored.' },
];

export const USER_ATTRIBUTES: AttrDef[] = [
  { name: 'id', type: 'string', mutability: 'readOnly', returned: 'always', uniqueness: 'server', caseExact: true, description: "Atrium's user Id." },
  {
    name: 'externalId',
    type: 'string',
    caseExact: true,
    uniqueness: 'server',
    description: 'ExternalId (unique in the tenant); defaults to userName on create.',
  },
  { name: 'userName', type: 'string', required: true, uniqueness: 'server', description: 'UserName (unique in the tenant, case-insensitive).' },
  {
    name: 'name',
    type: 'complex',
    description: 'Name: formatted, else givenName and familyName joined.',
    subAttributes: [
      { name: 'formatted', type: 'string', description: 'Name.' },
      { name: 'givenName', type: 'string', description: 'Kept for SCIM; part of Name when formatted is not sent.' },
      { name: 'familyName', type: 'string', description: 'Kept for SCIM; part of Name when formatted is not sent.' },
      accepted('middleName'),
      accepted('honorificPrefix'),
      accepted('honorificSuffix'),
    ],
  },
  { name: 'displayName', type: 'string', description: 'Name when no name is sent; answered as Name.' },
  { name: 'title', type: 'string', description: "The user's typology (business title) when the SCIM settings say typologyFromTitle." },
  { name: 'userType', type: 'string', description: 'The user type, through the SCIM settings userTypes map.' },
  { name: 'active', type: 'boolean', description: 'IsActive. false deactivates as the user feed does: login names freed with the externalId suffix.' },
  { name: 'password', type: 'string', mutability: 'writeOnly', returned: 'never', description: 'Sets the login password (stored hashed).' },
  {
    name: 'emails',
    type: 'complex',
    multiValued: true,
    description: 'Mail: the primary value, else the work one.',
    subAttributes: multi('e-mail address', 'Mail.'),
  },
  {
    name: 'phoneNumbers',
    type: 'complex',
    multiValued: true,
    description: 'Phone: the work value, else the primary one.',
    subAttributes: multi('phone number', 'Phone.'),
  },
  {
    name: 'groups',
    type: 'complex',
    multiValued: true,
    mutability: 'readOnly',
    description: "The user's roles (change them through /Groups).",
    subAttributes: [
      { name: 'value', type: 'string', mutability: 'readOnly', description: 'Role id.' },
      { name: '$ref', type: 'reference', referenceTypes: ['Group'], mutability: 'readOnly', description: 'The Group.' },
      { name: 'display', type: 'string', mutability: 'readOnly', description: 'Role name.' },
      { name: 'type', type: 'string', mutability: 'readOnly', description: '"direct".' },
    ],
  },
  accepted('nickName'),
  accepted('profileUrl', 'reference'),
  accepted('preferredLanguage'),
  accepted('locale'),
  accepted('timezone'),
  accepted('ims', 'complex', true),
  accepted('photos', 'complex', true),
  accepted('addresses', 'complex', true),
  accepted('entitlements', 'complex', true),
  accepted('roles', 'complex', true),
  accepted('x509Certificates', 'complex', true),
];

export const ENTERPRISE_ATTRIBUTES: AttrDef[] = [
  { name: 'employeeNumber', type: 'string', description: 'ExternalNumber.' },
  { name: 'department', type: 'string', description: "The user's department, by its external id, else its name, in the user's company." },
  { name: 'organization', type: 'string', description: "The user's company, by its code, else its name." },
  {
    name: 'manager',
    type: 'complex',
    description: 'ResponsibleId.',
    subAttributes: [
      { name: 'value', type: 'string', description: "The manager's SCIM id (Atrium user Id)." },
      { name: '$ref', type: 'reference', referenceTypes: ['User'], description: 'The manager.' },
      { name: 'displayName', type: 'string', mutability: 'readOnly', description: "The manager's Name." },
    ],
  },
  accepted('costCenter'),
  accepted('division'),
];

export const GROUP_ATTRIBUTES: AttrDef[] = [
  { name: 'id', type: 'string', mutability: 'readOnly', returned: 'always', uniqueness: 'server', caseExact: true, description: 'Role id.' },
  { name: 'displayName', type: 'string', required: true, uniqueness: 'server', description: 'Role name (built-in roles cannot be renamed).' },
  {
    name: 'members',
    type: 'complex',
    multiValued: true,
    description: 'Users holding the role: adding one assigns it (UserRoleAdded), removing one takes it away (UserRoleRemoved).',
    subAttributes: [
      { name: 'value', type: 'string', mutability: 'immutable', description: "The user's SCIM id." },
      { name: '$ref', type: 'reference', referenceTypes: ['User'], mutability: 'immutable', description: 'The user.' },
      { name: 'display', type: 'string', mutability: 'readOnly', description: "The user's Name." },
      { name: 'type', type: 'string', mutability: 'immutable', canonicalValues: ['User'], description: 'Always User.' },
    ],
  },
  accepted('externalId'),
];

const COMMON_DEFAULTS = { multiValued: false, required: false, caseExact: false, mutability: 'readWrite', returned: 'default', uniqueness: 'none' } as const;

function describe(attrs: AttrDef[]): unknown[] {
  return attrs.map(({ subAttributes, ...a }) => ({
    ...COMMON_DEFAULTS,
    ...a,
    ...(subAttributes ? { subAttributes: describe(subAttributes) } : {}),
  }));
}

export function schemaDocuments(baseUrl: string): Record<string, unknown>[] {
  const doc = (id: string, name: string, description: string, attributes: AttrDef[]) => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id,
    name,
    description,
    attributes: describe(attributes),
    meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${id}` },
  });
  return [
    doc(CORE_USER, 'User', 'An Atrium user', USER_ATTRIBUTES),
    doc(ENTERPRISE_USER, 'EnterpriseUser', 'Enterprise user', ENTERPRISE_ATTRIBUTES),
    doc(CORE_GROUP, 'Group', 'An Atrium role', GROUP_ATTRIBUTES),
  ];
}

export function resourceTypeDocuments(baseUrl: string): Record<string, unknown>[] {
  const schemas = ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'];
  return [
    {
      schemas,
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'Atrium users',
      schema: CORE_USER,
      schemaExtensions: [{ schema: ENTERPRISE_USER, required: false }],
      meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/User` },
    },
    {
      schemas,
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'Atrium roles',
      schema: CORE_GROUP,
      schemaExtensions: [],
      meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/Group` },
    },
  ];
}

export function serviceProviderConfig(baseUrl: string): Record<string, unknown> {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    documentationUri: `${baseUrl.replace(/\/scim\/v2$/, '')}/docs`,
    patch: { supported: true },
    bulk: { supported: true, maxOperations: LIMITS.bulkMaxOperations, maxPayloadSize: LIMITS.bulkMaxPayloadSize },
    filter: { supported: true, maxResults: LIMITS.maxResults },
    changePassword: { supported: true },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: 'A SCIM token of the tenant (POST /api/v3/scim/tokens), sent as Authorization: Bearer <token>.',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/ServiceProviderConfig` },
  };
}

/** An attribute's definition by name (case-insensitive). */
export function attrOf(attrs: AttrDef[], name: string): AttrDef | undefined {
  const lower = name.toLowerCase();
  return attrs.find((a) => a.name.toLowerCase() === lower);
}
