def apply_init_templates(results):
    return results


def resolve_exceptions(results):
    return {}
