import { toGraphqlName, type Catalog, type GroupDefinition } from '../catalog/load-catalog.js';
import type { Builder } from './builder.js';
import type { Enums } from './enums.js';

/** The `Group` enum (group names), the `ProjectGroup` type and the `groups` query field. */
export function addGroups(builder: Builder, refs: { catalog: Catalog; enums: Enums }) {
  const GroupName = builder.enumType('Group', {
    description:
      'A named group of projects of the catalog (`-` becomes `_`; the description gives the REST name). For a ' +
      "metric, a group's members are its projects the metric allows.",
    values: Object.fromEntries(
      refs.catalog.groups.map((g) => [toGraphqlName(g.name), { value: g.name, description: `REST name: ${g.name}` }]),
    ),
  });
  const ProjectGroup = builder.objectRef<GroupDefinition>('ProjectGroup').implement({
    description: 'A named group of projects that may reach across metrics.',
    fields: (t) => ({
      name: t.exposeString('name', { description: "The group's REST name, e.g. us-spot-btc-etf-issuers." }),
      description: t.exposeString('description', { description: 'What the group is.' }),
      projects: t.field({
        type: [refs.enums.Project],
        description: "The group's projects; a metric's members are those it allows.",
        resolve: (g) => [...g.projects],
      }),
    }),
  });
  builder.queryField('groups', (t) =>
    t.field({
      type: [ProjectGroup],
      description: 'The named groups of projects, as REST /v1/groups lists them.',
      resolve: () => [...refs.catalog.groups],
    }),
  );
  return GroupName;
}

export type GroupNameRef = ReturnType<typeof addGroups>;
