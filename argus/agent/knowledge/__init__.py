"""The curated knowledge base: technique files (techniques/*.toml), validated and searchable."""
from argus.agent.knowledge.loader import KnowledgeError, load_dir, load_file, load_knowledge
from argus.agent.knowledge.schema import OPS, SHAPE_CLASSES, Source, Technique
from argus.agent.knowledge.search import get_technique, search

__all__ = ["KnowledgeError", "load_dir", "load_file", "load_knowledge", "OPS", "SHAPE_CLASSES",
           "Source", "Technique", "get_technique", "search"]
