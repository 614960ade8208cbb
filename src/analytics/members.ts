import type { RequestIssue } from '../api/api-error.js';
import type { Catalog, GroupDefinition, MetricDefinition } from '../catalog/load-catalog.js';
import { clipped } from '../clipped.js';

/**
 * The projects a cross-project request is over, as the shared series request reads them:
 * a group's projects that the metric allows (catalog order), the projects given, or
 * undefined (every project of the metric). A group and projects together, an unknown
 * group, or a group without a project of the metric is an issue at `group` (the metric's
 * projects then stand in, so the series checks add no second error about them).
 */
export function memberProjects(
  catalog: Catalog,
  metric: Pick<MetricDefinition, 'name' | 'projects'>,
  group: string | undefined,
  projects: readonly string[] | undefined,
  issues: RequestIssue[],
): readonly string[] | undefined {
  if (group === undefined) return projects;
  if (projects !== undefined) {
    issues.push({ path: ['group'], message: 'give a group or projects, not both' });
    return projects;
  }
  const found = catalog.groups.find((g) => g.name === group);
  if (found === undefined) {
    const known = catalog.groups.map((g) => g.name).join(', ');
    issues.push({
      path: ['group'],
      message: `unknown group ${JSON.stringify(clipped(group))}; expected one of ${known}`,
    });
    return metric.projects;
  }
  const members = groupMembers(found, metric);
  if (members.length === 0) {
    issues.push({
      path: ['group'],
      message: `group ${found.name} has no project of ${metric.name}; its projects: ${found.projects.join(', ')}`,
    });
    return metric.projects;
  }
  return members;
}

/** A group's members for a metric: its projects the metric allows, in the group's order. */
export function groupMembers(group: GroupDefinition, metric: Pick<MetricDefinition, 'projects'>): string[] {
  return group.projects.filter((slug) => metric.projects.includes(slug));
}
