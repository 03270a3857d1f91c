/** Device counts by grade, as table cells in the order of the grades. */
import { GRADES } from '../table.js';
import type { GradeCounts } from '../types.js';

/** The header cells naming each grade. */
export const GradeHeaders = () => (
  <>
    {GRADES.map((grade) => (
      <th scope="col" key={grade} class="number">
        {grade}
      </th>
    ))}
  </>
);

/** One cell per grade with its count. */
export const GradeCells = ({ grades }: { grades: GradeCounts }) => (
  <>
    {GRADES.map((grade) => (
      <td key={grade} class="number">
        {grades[grade] ?? 0}
      </td>
    ))}
  </>
);
