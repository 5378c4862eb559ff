// Demo data: the names, places and catalogues the generated agency is made of.

export const FIRST = [
  'Ana',
  'Bruno',
  'Carla',
  'Daniel',
  'Eva',
  'Filipe',
  'Gina',
  'Hugo',
  'Ines',
  'Joao',
  'Karen',
  'Luis',
  'Marta',
  'Nuno',
  'Olga',
  'Pedro',
  'Quinn',
  'Rita',
  'Sofia',
  'Tiago',
  'Ursula',
  'Vasco',
  'Wendy',
  'Xavier',
  'Yara',
  'Alice',
  'Ben',
  'Chloe',
  'David',
  'Emma',
  'Frank',
  'Grace',
  'Henry',
  'Isla',
  'Jack',
  'Kate',
  'Leo',
  'Mia',
  'Noah',
  'Zoe',
];
export const LAST = [
  'Silva',
  'Santos',
  'Ferreira',
  'Pereira',
  'Oliveira',
  'Costa',
  'Rodrigues',
  'Martins',
  'Sousa',
  'Fernandes',
  'Goncalves',
  'Gomes',
  'Lopes',
  'Marques',
  'Alves',
  'Almeida',
  'Ribeiro',
  'Pinto',
  'Carvalho',
  'Smith',
  'Jones',
  'Taylor',
  'Brown',
  'Williams',
  'Wilson',
  'Johnson',
  'Davies',
  'Garcia',
  'Martinez',
  'Moreau',
];
export const CLIENT_ADJ = [
  'Northwind',
  'Blue Harbor',
  'Golden',
  'Silver Peak',
  'Red Oak',
  'Green Valley',
  'Atlantic',
  'Nova',
  'Summit',
  'Crystal',
  'Iron Bridge',
  'Bright',
  'Urban',
  'Coastal',
  'Prime',
  'Vertex',
];
export const CLIENT_NOUN = ['Foods', 'Motors', 'Telecom', 'Bank', 'Retail', 'Pharma', 'Airlines', 'Energy', 'Insurance', 'Beverages', 'Cosmetics', 'Logistics'];
export const BRAND_WORDS = ['Aurora', 'Zenith', 'Pulse', 'Essence', 'Vita', 'Orbit', 'Terra', 'Lumen', 'Nimbus', 'Solis', 'Verde', 'Astra'];
export const PRODUCT_WORDS = ['Classic', 'Light', 'Max', 'Pro', 'Kids', 'Gold', 'Fresh', 'Plus', 'Zero', 'Original'];
export const THINGS = [
  'Key Visual',
  'Social Media Pack',
  'TV Spot',
  'Landing Page',
  'Brochure',
  'Newsletter',
  'Banner Set',
  'Radio Spot',
  'Packaging',
  'Event Kit',
  'Brand Guidelines',
  'Product Video',
  'Website Update',
  'Outdoor Campaign',
  'Press Kit',
  'Annual Report',
];
export const EXTRA_COMPANIES = [
  'Atlas Creative',
  'Beacon Digital',
  'Cobalt Media',
  'Delta Studio',
  'Echo Partners',
  'Fathom Labs',
  'Granite Works',
  'Horizon Group',
  'Indigo House',
  'Juniper Agency',
  'Kestrel Brands',
  'Lighthouse Co',
];
export const SUPPLIERS: ReadonlyArray<[string, string]> = [
  ['PrintHouse', 'Printing'],
  ['Lens & Light Studio', 'Production'],
  ['CloudHost', 'IT'],
  ['Fast Couriers', 'Logistics'],
  ['Media Buyers Co', 'Media'],
  ['Sound Lab', 'Production'],
  ['Event Masters', 'Events'],
  ['Stock Images Ltd', 'Production'],
  ['Paper & Ink', 'Printing'],
  ['Pixel Freelancers', 'IT'],
];
export const COMMENTS = [
  'Please review the latest version.',
  'Client asked for a warmer colour palette.',
  'Deadline moved to next Friday.',
  'Uploaded the final files to the project folder.',
  'Can we schedule a call to align on scope?',
  'Approved by the client, thanks all!',
  'Copy needs a second pass for tone of voice.',
  'Budget is tight, keep third-party costs low.',
];
export const REPLIES = ['On it.', 'Done, see attached.', 'Agreed.', 'Will check with the client.', 'Thanks!', 'Can you clarify?'];
export const HOLIDAYS_2025: ReadonlyArray<[number, number, string]> = [
  [1, 1, "New Year's Day"],
  [4, 18, 'Good Friday'],
  [4, 25, 'Freedom Day'],
  [5, 1, 'Labour Day'],
  [6, 10, 'National Day'],
  [6, 19, 'Corpus Christi'],
  [8, 15, 'Assumption Day'],
  [10, 5, 'Republic Day'],
  [11, 1, "All Saints' Day"],
  [12, 1, 'Restoration of Independence'],
  [12, 8, 'Immaculate Conception'],
  [12, 25, 'Christmas Day'],
];
export const COUNTRIES: ReadonlyArray<{ iso: string; name: string; cities: string[]; currency: string; suffix: string }> = [
  { iso: 'PT', name: 'Portugal', cities: ['Lisbon', 'Porto'], currency: 'EUR', suffix: 'Lda.' },
  { iso: 'ES', name: 'Spain', cities: ['Madrid', 'Barcelona'], currency: 'EUR', suffix: 'S.L.' },
  { iso: 'GB', name: 'United Kingdom', cities: ['London', 'Manchester'], currency: 'GBP', suffix: 'Ltd' },
  { iso: 'US', name: 'United States', cities: ['New York', 'Chicago'], currency: 'USD', suffix: 'Inc.' },
  { iso: 'FR', name: 'France', cities: ['Paris', 'Lyon'], currency: 'EUR', suffix: 'SAS' },
];
export const CURRENCIES: ReadonlyArray<{ iso: string; name: string; symbol: string }> = [
  { iso: 'EUR', name: 'Euro', symbol: '€' },
  { iso: 'USD', name: 'US Dollar', symbol: '$' },
  { iso: 'GBP', name: 'Pound Sterling', symbol: '£' },
];
/** Value of one unit of the currency in EUR. */
export const TO_EUR: Record<string, number> = { EUR: 1, USD: 0.92, GBP: 1.17 };

export type DeptKind = 'General' | 'Creative' | 'Digital' | 'Accounts';
export const TYPOLOGIES: Record<DeptKind, ReadonlyArray<[string, string, number]>> = {
  // [name, typology group, hourly sell value]
  General: [
    ['Managing Director', 'Management', 180],
    ['Office Manager', 'Staff', 60],
  ],
  Creative: [
    ['Art Director', 'Creative', 140],
    ['Copywriter', 'Creative', 110],
    ['Designer', 'Creative', 95],
  ],
  Digital: [
    ['Developer', 'Production', 105],
    ['UX Designer', 'Creative', 110],
    ['Producer', 'Production', 90],
  ],
  Accounts: [
    ['Account Director', 'Account', 130],
    ['Account Manager', 'Account', 100],
    ['Strategist', 'Strategy', 140],
  ],
};
export const TYPOLOGY_GROUPS = ['Creative', 'Account', 'Production', 'Strategy', 'Management'];

/** Stage names per workflow, in the order of the stage types Draft, In Progress, Completed, Canceled. */
export const WORKFLOW_STAGES: Record<string, [string, string, string, string]> = {
  Deliverable: ['Draft', 'In Progress', 'Completed', 'Canceled'],
  Project: ['Draft', 'In Progress', 'Completed', 'Canceled'],
  Estimate: ['Draft', 'Sent', 'Approved', 'Rejected'],
  Contract: ['Draft', 'Active', 'Closed', 'Canceled'],
  Request: ['New', 'In Analysis', 'Accepted', 'Declined'],
  Bill: ['Draft', 'Issued', 'Paid', 'Voided'],
  PurchaseOrder: ['Draft', 'Ordered', 'Received', 'Canceled'],
  Expense: ['Draft', 'Submitted', 'Reimbursed', 'Rejected'],
  CommercialClient: ['Prospect', 'Active', 'Inactive', 'Lost'],
};
export const STAGE_TYPE_NAMES = ['Draft', 'In Progress', 'Completed', 'Canceled'] as const;
export type StageType = (typeof STAGE_TYPE_NAMES)[number];
export const TRANSITIONS: ReadonlyArray<[string, StageType, StageType]> = [
  ['Start', 'Draft', 'In Progress'],
  ['Complete', 'In Progress', 'Completed'],
  ['Cancel', 'In Progress', 'Canceled'],
  ['Discard', 'Draft', 'Canceled'],
  ['Reopen', 'Completed', 'In Progress'],
];
