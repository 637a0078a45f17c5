def render_svg(result):
    raise NotImplementedError
