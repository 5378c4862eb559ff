// The spec's event catalogue (ActionType, group, detail fields) and document types, in one place.
export const TYPE_NAMESPACE = 'Skill.Module.BusinessObjects';

export const fullTypeName = (className: string): string => (className.startsWith(`${TYPE_NAMESPACE}.`) ? className : `${TYPE_NAMESPACE}.${className}`);

export interface DocumentTypeEntry {
  name: string;
  className: string;
  fullName: string;
}

const DOCUMENT_TYPE_ROWS: [string, string][] = [
  ['Assignment', 'Assignment'],
  ['Bill', 'Bill'],
  ['Brand', 'Brand'],
  ['Client', 'Client'],
  ['Client Credit Note', 'ClientCreditNote'],
  ['Commercial Client', 'CommercialClient'],
  ['Commercial Client Product', 'CommercialClientProduct'],
  ['Contract', 'Contract'],
  ['Deliverable (Job)', 'Deliverable'],
  ['Document Brief', 'DocumentBrief'],
  ['Document State', 'DocumentState'],
  ['Document Tag', 'DocumentTag'],
  ['Document Task', 'DocumentTask'],
  ['Estimate', 'Estimate'],
  ['Expense', 'Expense'],
  ['Expense Item', 'ExpenseItem'],
  ['File', 'FileSystemObject'],
  ['Job Type', 'JobType'],
  ['Lead', 'CRM.Lead'],
  ['Person', 'Person'],
  ['Project', 'Project'],
  ['Purchase Order', 'PurchaseOrder'],
  ['Supplier Invoice', 'SupplierInvoice'],
  ['Supplier Note', 'SupplierNote'],
  ['Supplier Request', 'SupplierRequest'],
  ['Task', 'Task'],
  ['Tender', 'Tender'],
  ['Timesheet', 'Timesheet'],
  ['User', 'User'],
  ['Workflow State', 'WorkflowState'],
  ['Workflow State Transition', 'WorkflowStateTransition'],
];

export const DOCUMENT_TYPES: DocumentTypeEntry[] = DOCUMENT_TYPE_ROWS.map(([name, className]) => ({
  name,
  className,
  fullName: fullTypeName(className),
}));

export type EventGroup = 'Documents' | 'Workflow' | 'Authentication' | 'Roles and teams' | 'Other';

export interface EventEntry {
  actionType: string;
  group: EventGroup;
  firesWhen: string;
  /** Filterable detail fields; `dynamic` means every changed persistent property. */
  detailFields: string[] | 'dynamic';
}

export const EVENTS: EventEntry[] = [
  { actionType: 'Created', group: 'Documents', firesWhen: 'a document was created', detailFields: 'dynamic' },
  { actionType: 'Updated', group: 'Documents', firesWhen: 'a document property was modified', detailFields: 'dynamic' },
  { actionType: 'Deleted', group: 'Documents', firesWhen: 'a document was deleted', detailFields: 'dynamic' },
  {
    actionType: 'UserFieldValueUpdated',
    group: 'Documents',
    firesWhen: 'a custom (user-defined) field on a document changed',
    detailFields: ['ColumnName', 'Value'],
  },
  { actionType: 'TimeUpdated', group: 'Documents', firesWhen: 'timesheet data was updated', detailFields: 'dynamic' },
  {
    actionType: 'StageUpdated',
    group: 'Workflow',
    firesWhen: 'the workflow stage of a document changed',
    detailFields: [
      'WorkflowStageTransitionId',
      'WorkflowStageTransitionName',
      'WorkflowStageTransitionLocalizedName',
      'FromWorkflowStageId',
      'FromWorkflowStageName',
      'FromWorkflowStageLocalizedName',
      'ToWorkflowStageId',
      'ToWorkflowStageName',
      'ToWorkflowStageLocalizedName',
      'WorkflowId',
      'WorkflowName',
      'DepartmentId',
    ],
  },
  {
    actionType: 'LoginSucceeded',
    group: 'Authentication',
    firesWhen: 'a user logged in successfully',
    detailFields: ['LoginType', 'Username', 'LoginAsDelegate', 'DelegatedUserName'],
  },
  {
    actionType: 'LoginFailed',
    group: 'Authentication',
    firesWhen: 'a login attempt failed',
    detailFields: ['LoginType', 'Username', 'LoginAsDelegate', 'DelegatedUserName', 'FailureReason'],
  },
  { actionType: 'UserRoleAdded', group: 'Roles and teams', firesWhen: 'a role was assigned to a user', detailFields: ['RoleId', 'RoleName'] },
  { actionType: 'UserRoleRemoved', group: 'Roles and teams', firesWhen: 'a role was removed from a user', detailFields: ['RoleId', 'RoleName'] },
  { actionType: 'UserEffectiveRolesChanged', group: 'Roles and teams', firesWhen: "a user's effective roles changed", detailFields: [] },
  { actionType: 'UserImageUpdated', group: 'Roles and teams', firesWhen: "a user's profile image was updated", detailFields: [] },
  { actionType: 'RoleAddedToRole', group: 'Roles and teams', firesWhen: 'a child role was added to a role', detailFields: 'dynamic' },
  { actionType: 'RoleRemovedFromRole', group: 'Roles and teams', firesWhen: 'a child role was removed from a role', detailFields: 'dynamic' },
  { actionType: 'TeamAdded', group: 'Roles and teams', firesWhen: 'a team member was added to a document', detailFields: 'dynamic' },
  { actionType: 'TeamRemoved', group: 'Roles and teams', firesWhen: 'a team member was removed from a document', detailFields: 'dynamic' },
  { actionType: 'BatchExecuted', group: 'Other', firesWhen: 'a batch operation was executed', detailFields: ['DocumentType', 'Url'] },
  { actionType: 'FileDownloaded', group: 'Other', firesWhen: 'a file was downloaded from the system', detailFields: [] },
  { actionType: 'Executed', group: 'Other', firesWhen: 'a generic execution event', detailFields: [] },
];

export const ACTION_TYPES = new Set(EVENTS.map((e) => e.actionType));
