"""Layer 6: the Jupyter toolkit. The only layer that imports IPython, ipywidgets or anywidget."""

from dtl_notebook.notebook.export import export_html
from dtl_notebook.notebook.widget import AgentView

__all__ = ["AgentView", "export_html"]
