// Named queries over people: users, employees, user types, typologies and their groups, user costs.
import { type NamedQueryDefinition, sql } from '../../definition.ts';
import { userFieldsOf, userFieldValues, userName } from '../fragments.ts';

export const people: NamedQueryDefinition[] = [
  {
    name: 'DE-Users',
    key: ['UserId'],
    parameters: { ModifiedFrom: 'ModifiedOn', TaxPayerNumber: 'TaxPayerNumber', UserId: 'UserId', Email: 'Email' },
    // Country is not stored on a user: the city's country, else the company's (docs/data-model.md).
    // HourlyValue is the user's own hourly cost today (the user_costs row covering current_date).
    source: (ctx) => sql`
      select u.id as "DocumentOid", u.id as "UserId", ${userName('u')} as "User", u.is_active as "IsActive",
             d.id as "DepartmentId", d.name as "Department", dv.id as "DivisionId", dv.name as "Division",
             c.id as "CompanyId", c.name as "Company", ty.id as "TypologyId", ty.name as "Typology",
             ut.id as "TypeId", ut.name as "Type", co.id as "CountryId", co.name as "Country",
             u.hire_date as "HireDate", u.expiration_date as "TerminationDate", u.inactivated_on_utc as "InactivatedOnUtc",
             u.email as "Email", u.required_hours as "RequiredHours", c.required_hours as "CompanyRequiredHours",
             (select uc.hourly_value from user_costs uc
               where uc.tenant_id = u.tenant_id and uc.user_id = u.id
                 and uc.start_date <= current_date and (uc.end_date is null or uc.end_date >= current_date)
               order by uc.start_date desc limit 1) as "HourlyValue",
             u.city_id as "CityId", u.modified_on_utc as "ModifiedOn", u.tax_payer_number as "TaxPayerNumber",
             u.external_id as "ExternalId",
             exists (select 1 from commercial_client_users ccu where ccu.tenant_id = u.tenant_id and ccu.user_id = u.id) as "IsClient",
             (select string_agg(cl.id::text, ',' order by cl.name, cl.id)
                from commercial_client_users ccu
                join commercial_clients cl on cl.tenant_id = ccu.tenant_id and cl.id = ccu.commercial_client_id
               where ccu.tenant_id = u.tenant_id and ccu.user_id = u.id) as "ClientIds",
             (select string_agg(cl.name, ', ' order by cl.name, cl.id)
                from commercial_client_users ccu
                join commercial_clients cl on cl.tenant_id = ccu.tenant_id and cl.id = ccu.commercial_client_id
               where ccu.tenant_id = u.tenant_id and ccu.user_id = u.id) as "Clients"
        from users u
        left join departments d on d.tenant_id = u.tenant_id and d.id = u.department_id
        left join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
        left join companies c on c.tenant_id = u.tenant_id and c.id = u.company_id
        left join typologies ty on ty.tenant_id = u.tenant_id and ty.id = u.typology_id
        left join user_types ut on ut.tenant_id = u.tenant_id and ut.id = u.user_type_id
        left join cities ci on ci.tenant_id = u.tenant_id and ci.id = u.city_id
        left join countries co on co.tenant_id = u.tenant_id and co.id = coalesce(ci.country_id, c.country_id)
       where u.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-UsersAdditionalInformation',
    key: ['UserId'],
    userFields: { fields: userFieldsOf('User') },
    source: (ctx) => sql`
      select u.id as "UserId", ${userName('u')} as "User", ${userFieldValues('u.id', 'User')} as "__fields"
        from users u
       where u.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Employees',
    key: ['EmployeeId'],
    // ModifiedFrom, TaxPayerNumber and Email have no output column: they filter hidden ones (the
    // employee's modification time, and the tax number and e-mail of the login shown).
    parameters: { UserId: 'UserId', ModifiedFrom: 'ModifiedOnUtc', TaxPayerNumber: 'TaxPayerNumber', Email: 'Email' },
    hiddenColumns: [
      { name: 'ModifiedOnUtc', type: 'datetime' },
      { name: 'TaxPayerNumber', type: 'string' },
      { name: 'Email', type: 'string' },
    ],
    // An employee record may back several logins; the row shows the first (active first, then by name).
    source: (ctx) => sql`
      select e.id as "EmployeeId", e.name as "Employee", c.name as "Company", c.id as "CompanyId",
             lu.name as "User", lu.id as "UserId", e.external_id as "ExternalId", e.max_value as "MaxValue",
             e.is_active as "Active",
             e.modified_on_utc as "ModifiedOnUtc", lu.tax_payer_number as "TaxPayerNumber", lu.email as "Email"
        from employees e
        left join companies c on c.tenant_id = e.tenant_id and c.id = e.company_id
        left join lateral (
          select u.id, ${userName('u')} as name, u.tax_payer_number, u.email from users u
           where u.tenant_id = e.tenant_id and u.employee_id = e.id
           order by u.is_active desc, u.user_name limit 1) lu on true
       where e.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-UserTypes',
    key: ['UserTypeId'],
    source: (ctx) => sql`
      select ut.id as "UserTypeId", ut.name as "UserType"
        from user_types ut
       where ut.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-UserCosts',
    key: ['UserId', 'StartDate', 'CompanyId', 'CreatedOn'],
    source: (ctx) => sql`
      select u.id as "UserId", ${userName('u')} as "User", uc.monthly_value as "MonthlyValue", uc.hourly_value as "HourlyValue",
             uc.start_date as "StartDate", uc.end_date as "EndDate", c.id as "CompanyId", c.name as "Company",
             cu.id as "CurrencyId", cu.name as "Currency", uc.created_on_utc as "CreatedOn", uc.modified_on_utc as "ModifiedOn"
        -- As the platform: the company is the user's, the currency that company's (users without them drop out).
        from user_costs uc
        join users u on u.tenant_id = uc.tenant_id and u.id = uc.user_id
        join companies c on c.tenant_id = u.tenant_id and c.id = u.company_id
        join currencies cu on cu.tenant_id = c.tenant_id and cu.id = c.currency_id
       where uc.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Typologies',
    key: ['TypologyId'],
    // A typology belongs to a department; its company and division are the department's.
    source: (ctx) => sql`
      select ty.id as "DocumentOid", ty.id as "TypologyId", ty.name as "Typology",
             tg.id as "TypologyGroupId", tg.name as "TypologyGroup",
             c.id as "CompanyId", c.name as "Company", c.image_file_id is not null as "CompanyHasImage",
             dv.id as "DivisionId", dv.name as "Division", d.id as "DepartmentId", d.name as "Department",
             ty.plannable as "Plannable", ty.is_active as "IsActive", ty.hourly_value as "HourlyValue"
        from typologies ty
        left join typology_groups tg on tg.tenant_id = ty.tenant_id and tg.id = ty.typology_group_id
        left join departments d on d.tenant_id = ty.tenant_id and d.id = ty.department_id
        left join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
        left join companies c on c.tenant_id = d.tenant_id and c.id = d.company_id
       where ty.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-TypologyGroups',
    key: ['TypologyGroupId'],
    source: (ctx) => sql`
      select tg.id as "TypologyGroupId", tg.name as "TypologyGroup", c.id as "CompanyId", c.name as "Company"
        -- Groups without a company drop out (the platform's inner join).
        from typology_groups tg
        join companies c on c.tenant_id = tg.tenant_id and c.id = tg.company_id
       where tg.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-TypologyGroupsCompanies',
    key: ['Id'],
    source: (ctx) => sql`
      select x.id as "Id", tg.id as "TypologyGroupId", tg.name as "TypologyGroup", c.id as "CompanyId", c.name as "Company"
        from typology_group_companies x
        left join typology_groups tg on tg.tenant_id = x.tenant_id and tg.id = x.typology_group_id
        left join companies c on c.tenant_id = x.tenant_id and c.id = x.company_id
       where x.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-TypologyGroupsDepartments',
    key: ['Id'],
    source: (ctx) => sql`
      select x.id as "Id", tg.id as "TypologyGroupId", tg.name as "TypologyGroup", d.id as "DepartmentId", d.name as "Department"
        from typology_group_departments x
        left join typology_groups tg on tg.tenant_id = x.tenant_id and tg.id = x.typology_group_id
        left join departments d on d.tenant_id = x.tenant_id and d.id = x.department_id
       where x.tenant_id = ${ctx.tenantId}`,
  },
];
