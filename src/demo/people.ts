// Demo data: typology groups and typologies, then the staff: users, employees, costs and typology history.
import type { DemoContext } from './context.ts';
import { ds, mkDay, round2, ts, YEAR_END, YEAR_START } from './dates.ts';
import type { Agency, Company, Dept, Typology, User } from './model.ts';
import { FIRST, LAST, TYPOLOGIES, TYPOLOGY_GROUPS } from './vocabulary.ts';

export function addPeople(
  ctx: DemoContext,
  a: Pick<Agency, 'cityIds' | 'imageFile' | 'companies' | 'mainCompany'>,
): Pick<
  Agency,
  'groupId' | 'users' | 'uniqueUserName' | 'deptManager' | 'extraCompanies' | 'ceo' | 'officeManager' | 'staffOf' | 'staffOfDept' | 'accountsDept'
> {
  const { defaults, n, rngFor, add, audit } = ctx;
  const { cityIds, imageFile, companies, mainCompany } = a;
  const rTyp = rngFor('typologies');
  const groupId = new Map<string, string>([['Staff', defaults.typologyGroupId]]);
  TYPOLOGY_GROUPS.forEach((g, i) => {
    const id = rTyp.uuid();
    groupId.set(g, id);
    add('typology_groups', {
      id,
      name: g,
      external_id: `TG-${String(i + 2).padStart(3, '0')}`,
      company_id: mainCompany.id,
      ...audit(mkDay(2024, 1, 6), 600, null),
    });
  });
  for (const c of companies) {
    for (const [g, id] of groupId) {
      if (g === 'Staff' && c === mainCompany) continue; // linked by bootstrap
      add('typology_group_companies', { id: rTyp.uuid(), typology_group_id: id, company_id: c.id });
    }
    for (const d of c.depts) {
      let seq = d.id === defaults.departmentId ? 1 : 0;
      if (d.id === defaults.departmentId) d.typologies.push({ id: defaults.typologyId, name: 'Staff', groupId: defaults.typologyGroupId, sell: 70 });
      const linked = new Set<string>(d.id === defaults.departmentId ? [defaults.typologyGroupId] : []);
      for (const [name, g, sell] of TYPOLOGIES[d.kind]) {
        seq++;
        const t: Typology = { id: rTyp.uuid(), name, groupId: groupId.get(g)!, sell };
        d.typologies.push(t);
        add('typologies', {
          id: t.id,
          department_id: d.id,
          typology_group_id: t.groupId,
          name,
          external_id: `TYP-${String(seq).padStart(3, '0')}`,
          plannable: d.kind !== 'General',
          is_active: true,
          hourly_value: sell,
          ...audit(mkDay(2024, 1, 6), 610, null),
        });
        if (!linked.has(t.groupId)) {
          linked.add(t.groupId);
          add('typology_group_departments', { id: rTyp.uuid(), typology_group_id: t.groupId, department_id: d.id });
        }
      }
    }
  }

  // Users, employees, user costs, typology history.
  const rUsers = rngFor('users');
  const staffCount = n(20, 8);
  const users: User[] = [];
  const userNames = new Set<string>();
  const uniqueUserName = (first: string, last: string): string => {
    const base = `${first}.${last}`.toLowerCase();
    let name = base;
    for (let k = 2; userNames.has(name); k++) name = `${base}${k}`;
    userNames.add(name);
    return name;
  };
  const deptManager = new Map<string, User>();
  const extraCompanies = companies.slice(1);
  for (let i = 0; i < staffCount; i++) {
    let company: Company;
    let dept: Dept;
    if (i < 2) {
      company = mainCompany;
      dept = mainCompany.depts[0];
    } else {
      company = extraCompanies.length > 0 && (i - 2) % 2 === 1 ? extraCompanies[Math.floor((i - 2) / 2) % extraCompanies.length] : mainCompany;
      const workDepts = company.depts.filter((d) => d.kind !== 'General');
      dept = workDepts[(i + Math.floor(i / 7)) % workDepts.length];
    }
    const manager = deptManager.get(dept.id);
    const typology =
      i === 0
        ? dept.typologies.find((t) => t.name === 'Managing Director')!
        : i === 1
          ? dept.typologies.find((t) => t.name === 'Office Manager')!
          : manager
            ? rUsers.pick(dept.typologies.slice(1))
            : dept.typologies[0];
    const first = rUsers.pick(FIRST);
    const last = rUsers.pick(LAST);
    const regular = i < 2 || !manager || rUsers.chance(0.85);
    const inactive = i >= 2 && manager !== undefined && rUsers.chance(0.03);
    const lateHire = i >= 2 && manager !== undefined && !inactive && rUsers.chance(0.05);
    const hire = lateHire ? YEAR_START + rUsers.int(20, 160) : mkDay(rUsers.int(2012, 2024), rUsers.int(1, 12), rUsers.int(1, 28));
    const sell = typology.sell;
    const h1 = round2(sell * (0.33 + rUsers.next() * 0.12));
    const u: User = {
      id: rUsers.uuid(),
      name: `${first} ${last}`,
      company,
      dept,
      typology,
      responsibleId: i === 0 ? null : manager ? manager.id : users[0].id,
      regular,
      active: !inactive,
      firstDay: Math.max(YEAR_START, hire),
      lastDay: inactive ? mkDay(2025, 9, 30) : YEAR_END,
      hourly2025H1: h1,
      hourly2025H2: round2(h1 * 1.03),
      requiredMinutes: 480,
      pool: [],
    };
    if (!manager && i >= 2) deptManager.set(dept.id, u);
    if (i === 0) deptManager.set(dept.id, u);
    users.push(u);
    dept.staff.push(u);
    company.staff.push(u);
    const userName = uniqueUserName(first, last);
    const email = `${userName}@${company.domain}`;
    const ext = `EMP${String(10001 + i)}`;
    let employeeId: string | null = null;
    if (regular) {
      employeeId = rUsers.uuid();
      add('employees', {
        id: employeeId,
        company_id: company.id,
        name: u.name,
        external_id: ext,
        is_active: !inactive,
        max_value: 1500,
        ...audit(hire < YEAR_START ? mkDay(2024, 1, 8) : hire - 3, 600, null),
      });
    }
    const city = rUsers.pick(cityIds.get(company.countryIso)!);
    const createdDay = hire < mkDay(2024, 1, 8) ? mkDay(2024, 1, 8) : hire - 3;
    add('users', {
      id: u.id,
      user_name: userName,
      name: u.name,
      email,
      password_hash: null,
      is_active: !inactive,
      inactivated_on_utc: inactive ? ts(mkDay(2025, 10, 1), 540) : null,
      external_id: ext,
      external_number: `P${String(5001 + i)}`,
      company_id: company.id,
      department_id: dept.id,
      typology_id: typology.id,
      user_type_id: regular ? defaults.userTypeIds.regular : defaults.userTypeIds.temporary,
      employee_id: employeeId,
      responsible_id: u.responsibleId,
      city_id: city,
      image_file_id: rUsers.chance(0.5) ? imageFile(`avatar-${userName}.png`) : null,
      timesheet_required: regular,
      hire_date: ds(hire),
      start_date: ds(hire),
      expiration_date: inactive ? ds(mkDay(2025, 9, 30)) : null,
      sso_user_name: email,
      sso_only: rUsers.chance(0.3),
      ad_user_name: rUsers.chance(0.5) ? `CORP\\${userName}` : null,
      phone: `+351 21 ${rUsers.int(100, 999)} ${rUsers.int(1000, 9999)}`,
      tax_payer_number: String(rUsers.int(100000000, 299999999)),
      change_password_on_first_logon: false,
      required_weekly_hours: 40,
      required_hours: 8,
      leave_day_hours: 8,
      weekly_overtime_threshold_hours: 40,
      tolerance: 10,
      entry_time_total_minutes: 540,
      exit_time_total_minutes: 1080,
      entry_time_tolerance_total_minutes: 15,
      exit_time_tolerance_total_minutes: 15,
      offset_total_minutes: 0,
      paid_undertime: false,
      paid_overtime: rUsers.chance(0.4),
      tags: rUsers.chance(0.3) ? [rUsers.pick(['Senior', 'Remote', 'Mentor', 'New Joiner'])] : null,
      ...audit(createdDay, 600, users[0].id === u.id ? null : users[0].id, mkDay(2025, rUsers.int(1, 12), rUsers.int(1, 28)), 700),
    });
    add('user_costs', {
      id: rUsers.uuid(),
      user_id: u.id,
      company_id: company.id,
      currency_id: company.currencyId,
      monthly_value: round2(h1 * 168),
      hourly_value: h1,
      start_date: ds(mkDay(2024, 1, 1)),
      end_date: ds(mkDay(2025, 6, 30)),
      ...audit(mkDay(2024, 1, 8), 610, users[0].id),
    });
    add('user_costs', {
      id: rUsers.uuid(),
      user_id: u.id,
      company_id: company.id,
      currency_id: company.currencyId,
      monthly_value: round2(u.hourly2025H2 * 168),
      hourly_value: u.hourly2025H2,
      start_date: ds(mkDay(2025, 7, 1)),
      end_date: null,
      ...audit(mkDay(2025, 6, 20), 610, users[0].id),
    });
    const changed = dept.typologies.length > 1 && rUsers.chance(0.2) && hire < mkDay(2023, 1, 1);
    if (changed) {
      const prev = dept.typologies.find((t) => t.id !== typology.id)!;
      add('user_typology_histories', {
        id: rUsers.uuid(),
        user_id: u.id,
        typology_id: prev.id,
        start_date: ds(hire),
        end_date: ds(mkDay(2023, 6, 30)),
        ...audit(mkDay(2024, 1, 8), 620, users[0].id),
      });
    }
    add('user_typology_histories', {
      id: rUsers.uuid(),
      user_id: u.id,
      typology_id: typology.id,
      start_date: ds(changed ? mkDay(2023, 7, 1) : hire),
      end_date: null,
      ...audit(mkDay(2024, 1, 8), 621, users[0].id),
    });
  }
  const ceo = users[0];
  const officeManager = users[1];
  const staffOf = (c: Company): User[] => (c.staff.length > 0 ? c.staff : users);
  const staffOfDept = (d: Dept): User[] => (d.staff.length > 0 ? d.staff : staffOf(d.company));
  const accountsDept = (c: Company): Dept => c.depts.find((d) => d.kind === 'Accounts')!;
  return { groupId, users, uniqueUserName, deptManager, extraCompanies, ceo, officeManager, staffOf, staffOfDept, accountsDept };
}
