"""Persistence for the inventory: one JSON file per warehouse."""
import json
from pathlib import Path


class Store:
    def __init__(self, root):
        self.root = Path(root)

    def load(self, name):
        path = self.root / f"{name}.json"
        if not path.exists():
            return {}
        return json.loads(path.read_text())

    def save(self, name, data):
        (self.root / f"{name}.json").write_text(json.dumps(data, indent=2))
