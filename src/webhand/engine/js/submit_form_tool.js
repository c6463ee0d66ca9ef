// Submits a form tool's form (engine/page_tools.py) as a person would: the browser's validation first, then its
// submit button, after this answer returns (a submission that loads a new document would end the answer's world).
function () {
  if (!this.checkValidity()) {
    const bad = Array.from(this.elements).filter(e => e.willValidate && !e.checkValidity());
    return {invalid: bad.slice(0, 10).map(e => (e.name || e.id || e.tagName.toLowerCase()) + ': ' + e.validationMessage)};
  }
  const button = Array.from(this.elements).find(e => (e.type === 'submit' || e.type === 'image') && !e.disabled);
  // After this answer: a submission that loads a new document would otherwise end the answer's world.
  setTimeout(() => this.requestSubmit(button || undefined), 0);
  return {submitted: true};
}
