#!/usr/bin/env python3
"""A model endpoint on loopback speaking OpenAI's chat completions, answering each agent of
the main job with the answer its scripted run gives (examples/src/pipeline.rs): what
scripts/record_evals.sh records the shipped eval datasets' answers from, so that they replay
offline in CI. Prints its base URL on its first line, then serves until killed."""
import http.server
import json
import sys

DISCOVERY = {
    "page_title": "Login - MyApp",
    "discovered_elements": [
        {"element_id": "email-input", "type": "input",
         "attributes": {"name": "email", "placeholder": "Enter email", "required": True},
         "validation_rules": ["email_format", "not_empty"]},
        {"element_id": "password-input", "type": "input",
         "attributes": {"name": "password", "type": "password", "required": True},
         "validation_rules": ["min_length_8"]},
    ],
    "forms_detected": 1,
    "metadata": {"scan_duration_ms": 234, "framework_detected": "React"},
}
SELECTOR = {
    "selectors": {
        "email-input": {"primary": {"css": "#email-input", "xpath": "//input[@id='email-input']", "confidence": 0.95},
                        "fallback": [{"css": "input[name='email']", "confidence": 0.85}]},
        "password-input": {"primary": {"css": "#password-input", "xpath": "//input[@type='password']", "confidence": 0.98},
                           "fallback": []},
    },
    "strategy": "id-first-with-attribute-fallback",
    "warnings": [],
}
ACCESSIBILITY = {
    "overall_score": 78,
    "compliance_level": "AA",
    "issues": [
        {"severity": "critical", "wcag_criterion": "1.1.1", "affected_elements": ["logo-image"],
         "recommendation": "Add alt text to image", "auto_fixable": True},
        {"severity": "warning", "wcag_criterion": "2.4.6", "affected_elements": ["submit-btn"],
         "recommendation": "Improve button label descriptiveness", "auto_fixable": False},
    ],
    "passed_checks": {"keyboard_navigation": True, "color_contrast": True, "focus_indicators": False},
    "audit_metadata": {"tool_version": "1.2.0", "rules_applied": 56, "elements_scanned": 124},
}


def plan(prompt):
    # The plan file is named after the task the prompt names.
    for task in ("search_listing", "login_form_automation"):
        if task in prompt:
            break
    return {
        "plan_file_path": f"plans/{task}.md",
        "status": "success" if "accessibility_agent" in prompt else "partial",
        "agent_response_content": "Plan: open the page, fill #email-input and #password-input "
        "(fallback: input[name='email']), submit. Risk: the submit button label is vague.",
    }


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        text = "\n".join(m.get("content") or "" for m in body["messages"])
        system = body["messages"][0].get("content") or ""
        if "`discovery_agent`" in system:
            answer = DISCOVERY
        elif "`selector_agent`" in system:
            answer = SELECTOR
        elif "`accessibility_agent`" in system:
            answer = ACCESSIBILITY
        else:
            answer = plan(text)
        content = json.dumps(answer)
        reply = json.dumps({
            "id": "chatcmpl-canned",
            "model": "canned-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            # Tokens as a tokenizer would roughly count them: a word is about 4/3 tokens.
            "usage": {"prompt_tokens": len(text.split()) * 4 // 3,
                      "completion_tokens": len(content.split()) * 4 // 3},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(f"http://127.0.0.1:{server.server_port}/v1", flush=True)
server.serve_forever()
