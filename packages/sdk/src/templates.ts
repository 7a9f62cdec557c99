/** Reads the values back out of a contract message template such as `... Current status: {status}`. */
export function matchTemplate(template: string, message: string): Record<string, string> | null {
  const names: string[] = [];
  const pattern = template
    .split(/(\{\w+\})/)
    .map((part) => {
      const placeholder = /^\{(\w+)\}$/.exec(part);
      if (placeholder) {
        names.push(placeholder[1]);
        return '(.+?)';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  const match = new RegExp(`^${pattern}$`).exec(message);
  if (!match) return null;
  return Object.fromEntries(names.map((name, i) => [name, match[i + 1]]));
}
