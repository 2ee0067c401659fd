/**
 * TodoList.tsx: the list of todos with a filter and a counter.
 */
import React, { useEffect, useMemo, useState } from "react";
import { fetchTodos, Todo } from "../api";
import styles from "./TodoList.module.css";

export type Filter = "all" | "open" | "done";

interface TodoListProps {
  title: string;
  initialFilter?: Filter;
  onSelect?: (todo: Todo) => void;
}

/** One row; memoized because lists get long. */
const TodoItem = React.memo(function TodoItem({ todo, onSelect }: { todo: Todo; onSelect?: (t: Todo) => void }) {
  return (
    <li className={todo.done ? styles.done : undefined} onClick={() => onSelect?.(todo)}>
      {todo.title}
    </li>
  );
});

function useTodos(): [Todo[], boolean] {
  const [todos, setTodos] = useState<Todo[]>([]);
  const [loading, setLoading] = useState(true);

  useEffect(() => {
    let cancelled = false;
    fetchTodos().then((t) => {
      if (!cancelled) {
        setTodos(t);
        setLoading(false);
      }
    });
    return () => {
      cancelled = true;
    };
  }, []);
  return [todos, loading];
}

export const TodoList = ({ title, initialFilter = "all", onSelect }: TodoListProps) => {
  const [todos, loading] = useTodos();
  const [filter, setFilter] = useState<Filter>(initialFilter);

  const visible = useMemo(
    () => todos.filter((t) => filter === "all" || (filter === "done") === t.done),
    [todos, filter],
  );

  if (loading) {
    return <p className={styles.loading}>Loading…</p>;
  }
  return (
    <section>
      <h2>
        {title} ({visible.length})
      </h2>
      <select value={filter} onChange={(e) => setFilter(e.target.value as Filter)}>
        <option value="all">All</option>
        <option value="open">Open</option>
        <option value="done">Done</option>
      </select>
      <ul>
        {visible.map((t) => (
          <TodoItem key={t.id} todo={t} onSelect={onSelect} />
        ))}
      </ul>
    </section>
  );
};

export default class ErrorBoundary extends React.Component<{ children: React.ReactNode }, { error?: Error }> {
  state: { error?: Error } = {};

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  render() {
    return this.state.error ? <p role="alert">{this.state.error.message}</p> : this.props.children;
  }
}
