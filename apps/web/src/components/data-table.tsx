/** Every table of the dashboard and the partner portal: one frame, so all of them read the same to a screen reader. */
import type { ComponentChildren } from 'preact';

/** A column's header; `num` columns hold amounts and counts, right-aligned like their cells. */
export type Column = { label: ComponentChildren; num?: boolean };

/** A plain string is a text column; `false`, `null` and `undefined` leave out a column the viewer may not see. */
export type ColumnSpec = Column | string | false | null | undefined;

/** The columns the viewer sees. */
const shown = (specs: readonly ColumnSpec[]): Column[] =>
  specs.flatMap((spec) => (spec === false || spec === null || spec === undefined ? [] : [typeof spec === 'string' ? { label: spec } : spec]));

/**
 * A labelled region that takes the keyboard focus (so a table wider than the screen can be
 * scrolled without a mouse), with `scope="col"` headers. `cards` is for the tables whose rows are
 * laid out as cards on narrow screens: a table whose `display` is changed by CSS loses its table
 * semantics in some browsers unless its roles are written out, so the frame writes them on the
 * table, its row groups, the header row and the headers; the body rows pass their own.
 */
export function DataTable(props: { label: string; columns: readonly ColumnSpec[]; class?: string; cards?: boolean; children: ComponentChildren }) {
  const role = <R extends 'table' | 'rowgroup' | 'row' | 'columnheader'>(name: R): R | undefined => (props.cards ? name : undefined);
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={props.label}>
      <table class={props.class} role={role('table')}>
        <thead role={role('rowgroup')}>
          <tr role={role('row')}>
            {shown(props.columns).map((c, i) => (
              <th scope="col" class={c.num ? 'num' : undefined} role={role('columnheader')} key={i}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody role={role('rowgroup')}>{props.children}</tbody>
      </table>
    </div>
  );
}

/** A column of amounts or counts. */
export const numeric = (label: ComponentChildren): Column => ({ label, num: true });
