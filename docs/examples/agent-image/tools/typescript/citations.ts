/**
 * Format a paper as a one-line citation.
 * @param title The paper's title.
 * @param authors Author names, in order.
 * @param year Year of publication.
 * @param link Where to read it.
 */
export function formatCitation(
  title: string,
  authors: string[],
  year: number,
  link: string,
): string {
  const names = authors.length > 2 ? `${authors[0]} et al.` : authors.join(" and ");
  return `${names} (${year}). ${title}. ${link}`;
}
