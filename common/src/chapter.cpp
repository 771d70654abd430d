// placeholder: owned by another workstream, replaced when it lands
