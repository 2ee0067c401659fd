// api.ts: the todo service's HTTP client.
export interface Todo {
  id: number;
  title: string;
  done: boolean;
}

export async function fetchTodos(): Promise<Todo[]> {
  const res = await fetch("/api/todos");
  return res.json();
}
